"""``tune export`` (engine.export), driven through its own subparser.

The C output is compiled with the system compiler and rebuilds the classic table in C; the
tables export is evaluated from its manifest alone, as another engine would, and held to each
family's plain-Python reference.
"""

import json
import math
import re
import shutil
import struct
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest

from engine import export
from engine.depth import parse_depth
from engine.families import FAMILIES, get_family
from engine.families.classic import CLASSIC, line_table
from engine.weights_file import WeightsFile, WeightsFileError, read_weights, write_weights
from tuner.cli.export import tables_written
from tuner.cli.main import parse
from tuner.cli.options import UsageError

REPO_ROOT = Path(__file__).resolve().parents[2]
CLASSIC_REFERENCE = REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml"
CLASSIC_TUNED = REPO_ROOT / "runs" / "classic-d1" / "best.yaml"
SNAKE_SEED000 = REPO_ROOT / "engine" / "baselines" / "seed000-snake.yaml"
CLASSIC_NODES = REPO_ROOT / "runs" / "classic-nodes" / "best.yaml"  # depth: nodes:150000
C_COMPILER = shutil.which("cc")
needs_cc = pytest.mark.skipif(C_COMPILER is None, reason="no C compiler (cc) on this machine")


def export_cli(*argv) -> int:
    """Run ``tune export ARGV``'s handler, letting its errors through."""
    args = parse(["export", *map(str, argv)])
    return args.handler(args)


def exported(capsys, *argv) -> str:
    assert export_cli(*argv) == 0
    return capsys.readouterr().out


def compile_c(source: Path, *flags: str, compiler: str | None = C_COMPILER,
              libs: tuple[str, ...] = ()) -> None:
    """Compile ``source`` in its directory, failing the test on any error."""
    result = subprocess.run([compiler, *flags, source.name, *libs], check=False,
                            capture_output=True, text=True, cwd=source.parent)
    assert result.returncode == 0, result.stderr


# ---------------------------------------------------------------------------------- c


@needs_cc
@pytest.mark.parametrize("weights", [CLASSIC_REFERENCE, CLASSIC_TUNED, SNAKE_SEED000])
@pytest.mark.subprocess
def test_c_output_compiles(capsys, tmp_path, weights):
    source = tmp_path / "weights.c"
    source.write_text(exported(capsys, weights, "--format", "c"))
    compile_c(source, "-std=c89", "-pedantic-errors", "-c", "-o", "weights.o")
    if shutil.which("c++"):  # nneonneo/2048-ai is C++
        compile_c(source, "-std=c++98", "-pedantic-errors", "-x", "c++", "-c", "-o", "weights.o",
                  compiler="c++")


def test_c_names_classic_constants_as_nneonneo_does(capsys):
    text = exported(capsys, CLASSIC_TUNED, "--format", "c")
    loaded = read_weights(CLASSIC_TUNED)
    for param, name in export.CLASSIC_C_NAMES.items():
        assert f"static const double {name} = {loaded.weights[param]!r};" in text
    header = text.split("*/")[0]
    assert "runs/classic-d1/best.yaml" in header and "family classic, depth 1" in header
    assert "status validated, run classic-d1" in header
    assert "float" in header and "double" in header


def test_c_names_other_families_by_prefix(capsys):
    text = exported(capsys, SNAKE_SEED000, "--format", "c")
    assert "static const double TUNE2048_SNAKE_HEAD_PENALTY = 1.0;" in text
    assert "--format tables" in text
    assert len([line for line in text.splitlines() if line.startswith("static")]) == 4


def test_c_comment_cannot_be_closed_by_a_path(tmp_path, capsys):
    weights = tmp_path / "x*" / "w.yaml"  # the path holds "*/"
    weights.parent.mkdir()
    write_weights(weights, WeightsFile("classic", CLASSIC.defaults(), 1,
                                       {"run": "x */ int oops;\nnext"}))
    text = exported(capsys, weights, "--format", "c")
    assert text.count("*/") == 1  # the comment's own end
    assert "int oops; next" in text.splitlines()[1]


CLASSIC_LINES_C = r"""
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "weights.h"

/* A double as 8 little-endian bytes, whatever the host's byte order. */
static void put(FILE *out, double x) {
    unsigned char bytes[8];
    unsigned long long bits;
    int i;
    memcpy(&bits, &x, 8);
    for (i = 0; i < 8; ++i) bytes[i] = (unsigned char)(bits >> (8 * i));
    fwrite(bytes, 1, 8, out);
}

/* engine.families.classic.line_table, operation for operation (numpy sums left to right). */
static double line_value(unsigned row) {
    int line[4], i, empty = 0, merges = 0, prev = 0, run = 0;
    double mono_left = 0.0, mono_right = 0.0, sum = 0.0, diff;
    for (i = 0; i < 4; ++i) line[i] = (row >> (4 * i)) & 0xF;
    for (i = 0; i < 4; ++i) {
        if (line[i] == 0) { ++empty; continue; }
        if (line[i] == prev) ++run;
        else if (run > 0) { merges += 1 + run; run = 0; }
        prev = line[i];
    }
    if (run > 0) merges += 1 + run;
    for (i = 1; i < 4; ++i) {
        diff = pow(line[i - 1], SCORE_MONOTONICITY_POWER) - pow(line[i], SCORE_MONOTONICITY_POWER);
        if (line[i - 1] > line[i]) mono_left += diff; else mono_right += -diff;
    }
    for (i = 0; i < 4; ++i) sum += pow(line[i], SCORE_SUM_POWER);
    return SCORE_LOST_PENALTY + SCORE_EMPTY_WEIGHT * empty + SCORE_MERGES_WEIGHT * merges
        - SCORE_MONOTONICITY_WEIGHT * (mono_left < mono_right ? mono_left : mono_right)
        - SCORE_SUM_WEIGHT * sum;
}

int main(int argc, char **argv) {
    const double constants[7] = {SCORE_LOST_PENALTY, SCORE_MONOTONICITY_POWER,
        SCORE_MONOTONICITY_WEIGHT, SCORE_SUM_POWER, SCORE_SUM_WEIGHT, SCORE_MERGES_WEIGHT,
        SCORE_EMPTY_WEIGHT};
    FILE *out = fopen(argv[1], "wb");
    unsigned row;
    int i;
    if (argc != 2 || out == NULL) return 1;
    for (i = 0; i < 7; ++i) put(out, constants[i]);
    for (row = 0; row < 65536; ++row) put(out, line_value(row));
    return fclose(out) != 0;
}
"""


@needs_cc
@pytest.mark.parametrize("weights, other", [(CLASSIC_REFERENCE, CLASSIC_TUNED),
                                            (CLASSIC_TUNED, CLASSIC_REFERENCE)])
@pytest.mark.subprocess
def test_c_constants_rebuild_the_classic_table(capsys, tmp_path, weights, other):
    (tmp_path / "weights.h").write_text(exported(capsys, weights, "--format", "c"))
    (tmp_path / "lines.c").write_text(CLASSIC_LINES_C)
    compile_c(tmp_path / "lines.c", "-std=c99", "-O0", "-ffp-contract=off", "-o", "lines",
              libs=("-lm",))
    subprocess.run([str(tmp_path / "lines"), str(tmp_path / "lines.bin")], check=True)
    data = np.fromfile(tmp_path / "lines.bin", dtype="<f8")
    constants, c_table = data[:7], data[7:]

    loaded = read_weights(weights)
    vector = CLASSIC.vector(loaded.weights)
    # the literals read back as the identical doubles
    assert [struct.pack("<d", c) for c in constants] == [struct.pack("<d", w) for w in vector]
    ours = line_table(vector)
    # bit for bit: our per-rank powers come from the C library's pow too (rank_powers)
    assert np.array_equal(c_table, ours), f"{int((c_table != ours).sum())} entries differ"
    assert not np.allclose(c_table, line_table(CLASSIC.vector(read_weights(other).weights)))


# ------------------------------------------------------------------------------- json


@pytest.mark.parametrize("weights", [CLASSIC_TUNED, SNAKE_SEED000])
def test_json_round_trips_the_weights_file(capsys, weights):
    document = json.loads(exported(capsys, weights, "--format", "json"))
    loaded = read_weights(weights)
    family = get_family(loaded.family)
    assert document == {
        "format": "tune2048-export",
        "version": 1,
        "family": loaded.family,
        "family_name": family.name,
        "depth": loaded.depth,
        "weights": loaded.weights,
        "provenance": loaded.provenance,
    }
    assert list(document["weights"]) == list(family.param_names)


def strict_json(text: str):
    """``text`` read as strict JSON (RFC 8259): NaN and Infinity are not JSON."""
    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("fmt", ["json", "tables"])
def test_the_shipped_depth_policy_run_exports(capsys, tmp_path, fmt):
    """Issue 38: a weights file with a depth policy crashed both JSON exports."""
    out = tmp_path / "out"
    if fmt == "json":
        document = strict_json(exported(capsys, CLASSIC_NODES, "--format", fmt))
    else:
        assert export_cli(CLASSIC_NODES, "--format", fmt, "--output", out) == 0
        document = strict_json((out / "manifest.json").read_text())
    assert document["depth"] == "nodes:150000"
    assert parse_depth(document["depth"]) == read_weights(CLASSIC_NODES).depth


def test_c_header_names_the_depth_as_the_weights_file_does(capsys):
    header = exported(capsys, CLASSIC_NODES, "--format", "c").split("*/")[0]
    assert "family classic, depth nodes:150000;" in header


NON_FINITE_PROVENANCE = {"stderr": math.inf, "low": -math.inf, "spread": [math.nan, 1.5],
                         "nested": {"ci95": [-math.inf, math.inf]}}
NON_FINITE_AS_JSON = {"stderr": "Infinity", "low": "-Infinity", "spread": ["NaN", 1.5],
                      "nested": {"ci95": ["-Infinity", "Infinity"]}}


@pytest.mark.parametrize("fmt", ["json", "tables"])
def test_non_finite_provenance_is_written_as_strict_json(capsys, tmp_path, fmt):
    """A run that plays one game a candidate records an infinite stderr: JSON has no Infinity."""
    weights = tmp_path / "w.yaml"
    write_weights(weights, WeightsFile("classic", CLASSIC.defaults(), 1, NON_FINITE_PROVENANCE))
    if fmt == "json":
        document = strict_json(exported(capsys, weights, "--format", fmt))
    else:
        assert export_cli(weights, "--format", fmt, "--output", tmp_path / "out") == 0
        document = strict_json((tmp_path / "out" / "manifest.json").read_text())
    assert document["provenance"] == NON_FINITE_AS_JSON


@pytest.mark.parametrize("keys", ['1: a\n  "1": b', "true: a\n  'true': b",
                                  ".nan: a\n  NaN: b"])
def test_json_refuses_two_provenance_keys_written_alike(tmp_path, keys):
    """JSON keys are strings: a reader would keep one of the two and lose the other."""
    weights = tmp_path / "w.yaml"
    weights.write_text(CLASSIC_REFERENCE.read_text().split("provenance:")[0]
                       + f"provenance:\n  {keys}\n")
    for fmt, output in (("json", ()), ("tables", ("--output", tmp_path / "out"))):
        with pytest.raises(export.ExportError) as refused:
            export_cli(weights, "--format", fmt, *output)
        assert str(refused.value).startswith(f"{weights}: provenance: two keys are both ")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.yaml"]


@pytest.mark.parametrize("fmt", ["c", "json"])
def test_output_file_holds_what_stdout_shows(capsys, tmp_path, fmt):
    shown = exported(capsys, CLASSIC_TUNED, "--format", fmt)
    said = exported(capsys, CLASSIC_TUNED, "--format", fmt, "--output", tmp_path / "out")
    assert (tmp_path / "out").read_text() == shown
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no temporary file left
    what = {"c": "C constants", "json": "JSON"}[fmt]
    # one line says what was written and where; on standard output the export is all there is
    assert said == f"wrote {tmp_path / 'out'}: {what} of {CLASSIC_TUNED} (7 weights)\n"


# ----------------------------------------------------------------------------- tables


def line_codes(ranks) -> list[int]:
    """A board's 8 lines as the manifest defines them."""
    rows = [sum(ranks[r][c] << (4 * c) for c in range(4)) for r in range(4)]
    cols = [sum(ranks[r][c] << (4 * r) for r in range(4)) for c in range(4)]
    return rows + cols


def manifest_value(manifest: dict, tables: dict, ranks) -> float:
    """A board's value from the manifest alone, by its documented conventions."""
    lines = line_codes(ranks)
    cells = [rank for row in ranks for rank in row]
    tiles = sum(1 for rank in cells if rank)
    top, head = max(cells), ranks[0][0]
    floor = manifest["combiner_floor"]
    total = 0.0
    for term in manifest["terms"]:
        w = term["weight"]
        if term["kind"] == "board_term":
            v = term["values"]
            total += {
                "head_penalty": -w * (v[top] - v[head]) ** 2 if head != top else 0.0,
                "corner": w * v[top] if head == top else 0.0,
                "top_tile": w * v[top],
                "mean_tile": w * sum(2.0**r for r in cells if r) / tiles if tiles else 0.0,
            }[term["name"]]
            continue
        files = term["tables"]
        per_line = {"shared": files * 8, "rows_cols": files[:1] * 4 + files[1:] * 4,
                    "per_row": files, "per_line": files}[term["layout"]]
        a = sum(tables[f][code] for f, code in zip(per_line, lines[:len(per_line)], strict=True))
        floored = max(a, floor)
        total += {
            "identity": w * a,
            "log2": w * math.log2(floored),
            "reciprocal": w / floored,
            "power": w * floored ** term["exponent"],
            "per_tile": w * a / tiles if tiles else 0.0,
        }[term["combiner"]]
    return total


def random_boards(count: int, seed: int) -> list[list[list[int]]]:
    """Boards with empty cells, ties and big tiles; every fourth has its top tile at the head."""
    rng = np.random.default_rng(seed)
    boards = [[[0] * 4 for _ in range(4)]]
    for i in range(count):
        ranks = np.where(rng.random((4, 4)) < 0.3, 0, rng.integers(1, 16, (4, 4)))
        if i % 4 == 0:
            ranks[0, 0] = ranks.max()
        boards.append(ranks.tolist())
    return boards


def check_tables(directory: Path, family, vector, boards) -> dict:
    """The exported tables are the family's, and the manifest evaluates to its reference."""
    manifest = json.loads((directory / "manifest.json").read_text())
    heuristic = family.heuristic(vector)
    assert len(manifest["terms"]) == len(heuristic.terms)
    tables = {}
    for entry, term in zip(manifest["terms"], heuristic.terms, strict=True):
        if entry["kind"] == "board_term":
            assert entry["values"] == term.rank_values().tolist()
            continue
        assert (entry["layout"], entry["combiner"]) == (term.layout, term.combiner)
        assert (entry["weight"], entry["exponent"]) == (term.weight, term.exponent)
        for name, table in zip(entry["tables"], term.tables, strict=True):
            tables[name] = np.load(directory / name)
            assert tables[name].dtype == table.dtype and np.array_equal(tables[name], table)
    distinct = {id(t) for term in heuristic.terms for t in getattr(term, "tables", ())}
    assert sorted(p.name for p in directory.glob("*.npy")) == sorted(tables)
    assert len(tables) == len(distinct)  # a table used by several lines is written once
    scale = manifest["search_floor"]["scale"]
    for ranks in boards:
        expected = family.reference(ranks, vector)
        assert manifest_value(manifest, tables, ranks) == pytest.approx(
            expected, rel=1e-9, abs=1e-9 * scale), ranks
    return manifest


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_tables_evaluate_to_the_family_reference(tmp_path, capsys, name):
    family = FAMILIES[name]
    weights = tmp_path / "w.yaml"
    write_weights(weights, WeightsFile(name, family.defaults(), 2, {"run": "test"}))
    said = exported(capsys, weights, "--format", "tables", "--output", tmp_path / "out")
    vector = family.vector(family.defaults())
    manifest = check_tables(tmp_path / "out", family, vector, random_boards(300, 5))
    tables = sorted({f for term in manifest["terms"] for f in term.get("tables", [])},
                    key=lambda name: int(name.removeprefix("table").removesuffix(".npy")))
    shown = (f"{len(tables)} line table{'s' if len(tables) > 1 else ''} ({tables[0]}"
             + (f" to {tables[-1]})" if len(tables) > 1 else ")"))
    assert said == f"wrote {tmp_path / 'out'}: manifest.json and {shown} of {weights}\n"
    assert manifest["format"] == "tune2048-tables" and manifest["version"] == 1
    assert (manifest["family"], manifest["family_name"], manifest["depth"]) == (name, name, 2)
    assert manifest["weights"] == family.defaults()
    scale = family.heuristic(vector).scale()
    assert manifest["search_floor"]["scale"] == scale
    assert manifest["search_floor"]["tau"] == max(scale * 1e-6, 1e-12)


def test_the_tables_line_counts_what_the_directory_holds():
    out = Path("out")
    assert tables_written([out / "table0.npy", out / "manifest.json"], "w.yaml") == (
        "wrote out: manifest.json and 1 line table (table0.npy) of w.yaml")
    assert tables_written([out / "manifest.json"], "w.yaml") == (
        "wrote out: manifest.json (no line tables) of w.yaml")


PROBE_FAMILY = '''
import math

import numpy as np

from engine.families import BoardTerm, Family, Heuristic, LineSum, Param, combine, grid_lines
from engine.families import row_empty, row_values


def code(line):
    return sum(r << (4 * i) for i, r in enumerate(line))


class Probe(Family):
    """Every layout, combiner and board term not in the built-ins."""

    name = "probe"
    params = tuple(Param(n, d, -10.0, 10.0, n) for n, d in
                   [("a", 2.0), ("b", 0.5), ("c", 3.0), ("d", -1.5), ("e", 0.25), ("f", 0.5)])

    def tables(self):
        values, empty = row_values().sum(axis=1), row_empty()
        return {"t1": 1.0 + empty, "t2": 2.0 + values / 1024, "t3": values / 4096,
                "rows": [(r + 1.0) + empty for r in range(4)],
                "lines": [values * (i + 1) / 8 for i in range(8)], "t5": values - 3 * empty}

    def heuristic(self, weights):
        a, b, c, d, e, f = (float(w) for w in weights)
        t = self.tables()
        return Heuristic((
            LineSum("rows_cols", (t["t1"], t["t2"]), "log2", a),
            LineSum("shared", (t["t3"],), "power", 1.0, b),
            LineSum("per_row", tuple(t["rows"]), "reciprocal", c),
            LineSum("per_line", tuple(t["lines"]), "per_tile", d),
            LineSum("shared", (t["t5"],), "identity", 2.5),
            BoardTerm("top_tile", e, np.sqrt(np.arange(16.0))),
            BoardTerm("head_penalty", f),
        ))

    def reference(self, ranks, weights):
        a, b, c, d, e, f = (float(w) for w in weights)
        t = self.tables()
        rows, cols = grid_lines(ranks)
        cells = [r for row in ranks for r in row]
        tiles = sum(1 for r in cells if r)
        top, head = max(cells), ranks[0][0]
        total = combine("log2", sum(t["t1"][code(x)] for x in rows)
                        + sum(t["t2"][code(x)] for x in cols), a)
        total += combine("power", sum(t["t3"][code(x)] for x in rows + cols), 1.0, b)
        total += combine("reciprocal", sum(t["rows"][i][code(x)] for i, x in enumerate(rows)), c)
        total += combine("per_tile", sum(t["lines"][i][code(x)]
                                         for i, x in enumerate(rows + cols)), d, tiles=tiles)
        total += 2.5 * sum(t["t5"][code(x)] for x in rows + cols)
        total += e * math.sqrt(top) - (f * (top - head) ** 2 if head != top else 0.0)
        return total
'''


def probe_weights(tmp_path) -> tuple[Path, Path]:
    family_file = tmp_path / "probe.py"
    family_file.write_text(PROBE_FAMILY)
    weights = tmp_path / "w.yaml"
    family = get_family(f"{family_file}:Probe")
    write_weights(weights, WeightsFile(f"{family_file}:Probe", family.defaults(), 1))
    return weights, family_file


def test_tables_define_every_combiner_and_board_term(tmp_path):
    weights, family_file = probe_weights(tmp_path)
    out = tmp_path / "out"
    assert export_cli(weights, "--format", "tables", "--output", out,
                      "--family-file", family_file) == 0
    family = get_family(f"{family_file}:Probe")
    manifest = check_tables(out, family, family.vector(family.defaults()), random_boards(300, 9))
    identity = manifest["terms"][4]
    assert identity["weight"] == 2.5  # recorded, not multiplied into the table


def test_a_family_file_runs_only_when_named(tmp_path):
    weights, _ = probe_weights(tmp_path)
    with pytest.raises(WeightsFileError, match="add --family-file"):
        export_cli(weights, "--format", "json")


def test_tables_replace_a_previous_export(tmp_path):
    out = tmp_path / "out"
    combined = tmp_path / "combined.yaml"
    write_weights(combined, WeightsFile("combined", FAMILIES["combined"].defaults(), 1))
    export_cli(combined, "--format", "tables", "--output", out)
    (out / "notes.txt").write_text("mine")
    assert export_cli(CLASSIC_TUNED, "--format", "tables", "--output", out) == 0
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "notes.txt", "table0.npy"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["family"] == "classic"
    np.testing.assert_array_equal(np.load(out / "table0.npy"),
                                  line_table(CLASSIC.vector(read_weights(CLASSIC_TUNED).weights)))


# -------------------------------------------------------------------------- bad input


def test_tables_need_an_output_directory():
    with pytest.raises(export.ExportError, match=r"^--format tables needs --output DIR"):
        export_cli(CLASSIC_REFERENCE, "--format", "tables")


def test_tables_refuse_a_directory_of_other_files(tmp_path):
    (tmp_path / "mine.txt").write_text("mine")
    refused = rf"^{re.escape(str(tmp_path))}: not empty and not a tables export"
    with pytest.raises(export.ExportError, match=refused):
        export_cli(CLASSIC_REFERENCE, "--format", "tables", "--output", tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]
    assert export_cli(CLASSIC_REFERENCE, "--format", "tables", "--output", tmp_path,
                      "--overwrite") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["manifest.json", "mine.txt",
                                                          "table0.npy"]


def test_tables_refuse_a_file_as_output(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(export.ExportError, match="must be a directory"):
        export_cli(CLASSIC_REFERENCE, "--format", "tables", "--output", tmp_path / "file")


def test_overwrite_is_for_tables_only():
    with pytest.raises(export.ExportError, match="--overwrite applies to --format tables only"):
        export_cli(CLASSIC_REFERENCE, "--format", "c", "--overwrite")


def test_missing_weights_file(tmp_path):
    with pytest.raises(WeightsFileError, match="cannot read weights file"):
        export_cli(tmp_path / "nope.yaml", "--format", "json")


def test_invalid_weights_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(textwrap.dedent("""\
        format: tune2048-weights
        version: 1
        family: classic
        depth: 1
        weights: {lost_penalty: 1.0}
    """))
    with pytest.raises(WeightsFileError, match=r"bad\.yaml: weights\.monotonicity_power"):
        export_cli(bad, "--format", "c")


def test_unknown_format_is_refused_by_argparse():
    with pytest.raises(UsageError, match="invalid choice: 'xml'") as refused:
        export_cli(CLASSIC_REFERENCE, "--format", "xml")
    assert refused.value.exit_code == 2


def test_unwritable_output_is_a_one_line_error(tmp_path):
    with pytest.raises(export.ExportError, match="cannot write"):
        export_cli(CLASSIC_REFERENCE, "--format", "json", "--output", tmp_path / "no" / "x.json")


def test_tune_export_is_a_subcommand_of_tune(tmp_path, capsys):
    from tuner.cli.main import main

    assert main(["export", str(CLASSIC_REFERENCE), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["weights"]["lost_penalty"] == 200000.0
    assert main(["export", str(CLASSIC_REFERENCE), "--format", "tables"]) == 2
    assert capsys.readouterr().err.strip() == (
        "tune: error: --format tables needs --output DIR, the directory to write")
