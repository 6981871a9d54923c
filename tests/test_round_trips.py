"""Everything tune writes, it reads back (issue 38): each writer of a file that tune2048 reads
again, held to its own reader with every field at its extremes.

- a weights file and a run's ``best.yaml`` (``write_weights``, the run's ``BestSoFar``) against
  ``read_weights``, what ``tune play --weights`` reads;
- a run's ``config.yaml`` (``tuner.store.checkpoint.write_config``) against
  ``read_stored_config`` and ``parse_config``, what ``tune resume`` reads;
- ``history.csv`` and ``validation.csv`` (``rows_csv``, ``validation_csv``) against
  ``tuner.analysis.report.read_rows``, what ``tune report`` reads;
- a ``tune compare --save`` file (``SavedGames.add``) against ``SavedGames``;
- ``tune export --format json`` and the tables' ``manifest.json`` against a strict JSON reader
  and ``parse_depth``.

Values are compared by ``repr``, which tells ``1`` from ``1.0`` and ``-0.0`` from ``0.0`` and
finds a NaN equal to itself. A reader refuses a file larger than its ``MAX_*`` constant: the
largest ``config.yaml`` a run may write, and the ``best.yaml`` that carries it, are written and
read here.
"""

from __future__ import annotations

import datetime
import json
import math
import re
from pathlib import Path

import pytest
import yaml

from engine import weights_file
from engine.depth import ByBoard, NodeBudget, parse_depth, to_yaml
from engine.solver import GameResult, PlayerSpec
from engine.weights_file import (
    MAX_BYTES,
    WeightsFile,
    WeightsFileError,
    read_weights,
    write_weights,
)
from tuner.analysis import report
from tuner.cli.main import main
from tuner.config import parse_config
from tuner.config.limits import MAX_CONFIG_BYTES
from tuner.errors import ConfigError
from tuner.games.fitness import Fitness
from tuner.games.saved_games import SavedGames
from tuner.loop.observers import BestSoFar, validation_csv
from tuner.loop.record import ValidationRow
from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import Candidate, RunState
from tuner.store.store import DirectoryStore, MemoryStore

# Strings a YAML reader could take for something else: YAML 1.2 numbers that YAML 1.1 (PyYAML's
# own dumper) writes bare, YAML 1.1 values, keys of the syntax, escapes, and sheer length.
STRINGS = ["1e5", "1.5e5", "+1", "017", ".5", "0o17", "0x1F", "1_000", "0b101", "1:30", "yes",
           "No", "on", "null", "~", "", "true", "False", ".inf", "-.Inf", ".NaN", "2024-01-01",
           "<<", "=", " padded ", "two\nlines", "tab\there", "#", "- dash", "? key", "'", '"',
           "ñandú 2048 🎲", "\u2028\x85\x00", "\udc80", "x" * 10_000]
FLOATS = [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
          -1.7976931348623157e308, 1e16, 0.1, 1 / 3, math.inf, -math.inf, math.nan]
INTEGERS = [0, -1, 2**63, -(2**64), 10**300]
PROVENANCE = {
    "strings": STRINGS,
    "floats": FLOATS,
    "integers": INTEGERS,
    "keys": {**{text: i for i, text in enumerate(STRINGS[:24])}, 7: "an int", 2.5: "a float",
             True: "a bool", None: "null"},
    "other": {"date": datetime.date(2024, 1, 1), "time": datetime.datetime(2024, 1, 1, 12, 30),
              "bytes": b"\x00\xff", "nested": [[[{"deep": [1.5]}]]]},
}
FINITE = [x for x in FLOATS if math.isfinite(x)]
# every form of depth policy, at the ends of its settings
PLAYING_DEPTHS = [0, 8, ByBoard(), ByBoard(floor=0, offset=16, cap=1),
                  ByBoard(floor=14, offset=0), NodeBudget(1), NodeBudget(10**12)]
TUNING_DEPTHS = [0, 5, ByBoard(cap=5), ByBoard(floor=0, offset=16, cap=1), NodeBudget(1),
                 NodeBudget(20_000_000)]
# parameter names a YAML reader could take for something else; the first two are tuned
ODD_NAMES = ("ñandú", "ω", "null", "true", "yes", "NaN", "inf", "x" * 300)

FAMILY = '''
from engine.families import Family, Heuristic, LineSum, Param, grid_lines, row_empty


class Odd(Family):
    """Empty cells weighed by its first two weights; every other parameter is never read."""

    name = "odd"
    summary = "empty cells, with parameters it never reads"
    params = tuple(Param(name, 1.0, 0.5, 2.0, "") for name in {names!r}) + tuple(
        Param("w" + str(i).zfill({width} - 1), 1.0, 0.5, 2.0, "") for i in range({count}))

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (float(weights[0] * weights[1]) * row_empty(),)),))

    def reference(self, ranks, weights):
        rows, cols = grid_lines(ranks)
        return float(weights[0] * weights[1]) * sum(line.count(0) for line in rows + cols)
'''


def same(a, b) -> bool:
    """Equal values of the same types: ``repr`` tells what ``==`` does not."""
    return repr(a) == repr(b)


def family_file(directory: Path, count: int = 0, width: int = 8) -> Path:
    """The ``Odd`` family in ``directory``: ``ODD_NAMES``, then ``count`` parameters whose names
    are ``width`` characters long."""
    path = directory / "odd.py"
    path.write_text(FAMILY.format(names=ODD_NAMES, count=count, width=width), encoding="utf-8")
    return path


def config_document(family: Path, depth, params: dict | None = None) -> dict:
    """A run config whose every string a YAML reader could misread, of the ``Odd`` family (in
    the working folder or below it, where the config is)."""
    return {
        "run": {"name": "1e" + "9" * 98, "output_dir": "0o17", "seed": 2**63 - 1},  # name: .inf
        "family": f"{family.relative_to(Path.cwd())}:Odd",
        "params": {"ñandú": {"init": 1.0, "low": 0.5, "high": 2.0, "scale": "log"},
                   "ω": {"init": 1.0, "low": 0.5, "high": 2.0},
                   **{name: {"fixed": value} for name, value in zip(ODD_NAMES[2:], FINITE)},
                   **(params or {})},
        "search": {"depth": to_yaml(depth), "cutoff": 5e-324},
        "evaluation": {"games": 1},
        "cmaes": {"sigma0": 1e-6, "popsize": "auto", "max_generations": 10**9,
                  "max_games": 10**15},
        "ray": {"address": "1:30"},
        "validation": {"games": 1, "top_k": 1},
    }


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    """``tmp_path`` as the working folder: a run directory is relative to it."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ---- the weights file --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", PLAYING_DEPTHS, ids=str)
def test_a_weights_file_reads_back_as_written(tmp_path, depth):
    family = family_file(tmp_path)
    weights = {name: FINITE[i % len(FINITE)] for i, name in enumerate(ODD_NAMES)}
    written = WeightsFile(f"{family}:Odd", weights, depth, PROVENANCE)
    path = tmp_path / "w.yaml"
    write_weights(path, written)

    assert same(read_weights(path, [family]), written)
    # PyYAML reads it as YAML 1.1, as a user's own tools may: the same values
    assert same(yaml.safe_load(path.read_text(encoding="utf-8"))["provenance"], PROVENANCE)


def test_a_weights_file_too_large_to_read_back_is_never_written(tmp_path, monkeypatch):
    monkeypatch.setattr(weights_file, "MAX_BYTES", 1_000)  # as read_weights reads it
    path = tmp_path / "w.yaml"
    huge = WeightsFile("classic", read_weights("classic-reference").weights, 1,
                       {"notes": "x" * 1_000})
    with pytest.raises(WeightsFileError, match=rf"^{re.escape(str(path))}: cannot write a "
                                               r"weights file of 1,\d\d\d bytes: .* up to 1,000"):
        write_weights(path, huge)
    with pytest.raises(WeightsFileError, match="up to 1,000"):
        MemoryStore(tmp_path).write_best(huge)
    assert list(tmp_path.iterdir()) == []


# ---- a run's config.yaml and best.yaml ---------------------------------------------------------


def validated(config, store) -> Path:
    """``best.yaml`` as a run writes it: after a generation, then for the validated winner, with
    every number the provenance records at an extreme; its path."""
    weights = {p.name: p.init for p in config.params}
    state = RunState(config=config.resolved(), generation=2**31, games=10**15,
                     elites=[Candidate([0.5, 0.5], weights, -0.0, math.inf, 1, 2**31)])
    winner = ValidationRow("distribution mean", 2**31, weights, Fitness(5e-324, math.nan, 1),
                           1.7976931348623157e308, math.inf, {2048: 0.0, 32768: 1.0})
    best = BestSoFar(config, store)
    best.generation_ended(None, state)
    best.validation_ended([winner], winner, state)
    return store.location / ckpt.BEST_FILE


@pytest.mark.parametrize("depth", TUNING_DEPTHS, ids=str)
def test_a_runs_config_yaml_and_best_yaml_read_back(in_tmp, depth):
    family = family_file(in_tmp)
    config = parse_config(config_document(family, depth), "c.yaml", in_tmp)
    run_dir = config.run_dir
    run_dir.mkdir(parents=True)
    resolved = config.resolved()

    ckpt.write_config(run_dir, resolved)
    stored = ckpt.read_stored_config(run_dir)
    assert same(stored, resolved)
    assert same(parse_config(stored, "config.yaml", run_dir).resolved(), resolved)

    best = validated(config, DirectoryStore(run_dir))
    loaded = read_weights(best, [family])
    assert loaded.family == config.family and loaded.depth == depth
    assert same(loaded.weights, {p.name: p.init for p in config.params})
    assert same(loaded.provenance["config"], resolved)
    assert loaded.provenance["run"] == config.run.name

    memory = MemoryStore(run_dir)  # the same bytes as the directory
    memory.write_config(resolved)
    validated(config, memory)
    assert memory.files[ckpt.CONFIG_FILE] == (run_dir / ckpt.CONFIG_FILE).read_bytes()
    assert memory.files[ckpt.BEST_FILE] == best.read_bytes()


def test_a_runs_best_yaml_plays(in_tmp, capsys):
    family = family_file(in_tmp)
    config = parse_config(config_document(family, NodeBudget(150_000)), "c.yaml", in_tmp)
    config.run_dir.mkdir(parents=True)
    best = validated(config, DirectoryStore(config.run_dir))
    assert main(["play", "--weights", str(best), "--family-file", str(family), "--games", "1",
                 "--depth", "0"]) == 0, capsys.readouterr().err


def config_with(tmp_path: Path, count: int, width: int):
    """The config of an ``Odd`` family of ``count`` more parameters ``width`` characters long,
    each fixed at the longest float there is to write (a folder of its own: a family file is
    imported once)."""
    folder = tmp_path / f"{count}-{width}"
    folder.mkdir()
    family = family_file(folder, count, width)
    longest = {"w" + str(i).zfill(width - 1): {"fixed": -2.2250738585072014e-308}
               for i in range(count)}
    return parse_config(config_document(family, 1, longest), "c.yaml", tmp_path)


def sizes(config, directory: Path) -> tuple[int, int]:
    """The bytes of the config.yaml and the validated best.yaml that ``config``'s run writes."""
    store = MemoryStore(directory)
    store.write_config(config.resolved())
    validated(config, store)
    return len(store.files[ckpt.CONFIG_FILE]), len(store.files[ckpt.BEST_FILE])


@pytest.mark.parametrize("count, width", [(1_000, 2), (20, 4_000)], ids=["short", "long"])
def test_a_best_yaml_grows_with_its_config_within_what_its_reader_takes(in_tmp, count, width):
    """``best.yaml`` holds the run's config.yaml and a weight per parameter: scaled up to the
    largest config.yaml a run may write, it still fits in ``MAX_BYTES``."""
    config_bytes, best_bytes = sizes(config_with(in_tmp, count, width), in_tmp)
    assert best_bytes * MAX_CONFIG_BYTES <= config_bytes * MAX_BYTES


@pytest.mark.slow
def test_the_largest_config_a_run_takes_writes_files_it_reads_back(in_tmp):
    """A config whose config.yaml would not be read back is refused when it is read; the largest
    that is not writes a config.yaml and a best.yaml that read back (``tune play --weights``)."""
    width = 4_000  # long names: few parameters, so the YAML is quick to write and read
    one, two = (sizes(config_with(in_tmp, count, width), in_tmp)[0] for count in (1, 2))
    largest = 1 + (MAX_CONFIG_BYTES - one) // (two - one)
    with pytest.raises(ConfigError, match=r"c\.yaml: params: the run's config\.yaml, with all "
                                          rf"{len(ODD_NAMES) + largest + 1} parameters .* "
                                          r"would be .* bytes"):
        config_with(in_tmp, largest + 1, width)

    config = config_with(in_tmp, largest, width)
    config.run_dir.mkdir(parents=True)
    ckpt.write_config(config.run_dir, config.resolved())
    assert (config.run_dir / ckpt.CONFIG_FILE).stat().st_size > MAX_CONFIG_BYTES - (two - one)
    assert same(ckpt.read_stored_config(config.run_dir), config.resolved())
    best = validated(config, DirectoryStore(config.run_dir))
    family = in_tmp / f"{largest}-{width}" / "odd.py"
    assert same(read_weights(best, [family]).provenance["config"], config.resolved())


def test_a_family_file_the_run_directory_cannot_name_is_refused_when_the_config_is_read(in_tmp):
    family = family_file(in_tmp)
    document = config_document(family, 1)
    document["run"]["output_dir"] = "/".join(["d"] * 130)  # 131 folders down: ../ 131 times
    with pytest.raises(ConfigError) as refused:
        parse_config(document, "c.yaml", in_tmp)
    assert str(refused.value).startswith("c.yaml: family: from the run directory d/d/d/")
    # the family's absolute path is shortened where long (a test's folder under xdist is)
    assert str(refused.value).endswith(" is a spec of 403 characters, but a family spec is read "
                                       "back only up to 256: put run.output_dir nearer the "
                                       "family file")


# ---- history.csv and validation.csv ------------------------------------------------------------


# a number of a run's rows at the ends of its column's range (tuner.store.checkpoint.COLUMN_KINDS)
EXTREMES = {ckpt.VALUE: [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e300, -1e300, 1e16, 0.1,
                         1 / 3],
            ckpt.SIZE: [0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1e300, 1e16, 0.1, 1 / 3],
            ckpt.SPREAD: [0.0, 5e-324, 1e300, 0.1, math.inf, math.nan]}


def test_history_csv_reads_back(tmp_path):
    rows = [{column: EXTREMES.get(ckpt.COLUMN_KINDS[column], FLOATS)[
        (i + j) % len(EXTREMES.get(ckpt.COLUMN_KINDS[column], FLOATS))] for j, column in
        enumerate(report.HISTORY_COLUMNS)} | {"within_noise": True, "best_ñandú": 5e-324}
        for i in range(len(FLOATS))]
    for row in rows:  # the counts are whole numbers
        row.update(generation=2**53, evaluations=0, games=10**15)
    rows[-1]["positions"] = 2**62  # a column that later rows add
    path = tmp_path / ckpt.HISTORY_FILE
    path.write_text(ckpt.rows_csv(rows), encoding="utf-8")

    back = report.read_rows(path, report.HISTORY_COLUMNS, required=True)
    assert same([{c: row[c] for c in report.HISTORY_COLUMNS} for row in back],
                [{c: float(row[c]) for c in report.HISTORY_COLUMNS} for row in rows])


def test_validation_csv_reads_back(tmp_path):
    rows = [ValidationRow(label, 2**31, {name: w for name in ODD_NAMES}, Fitness(x, e, 1), x, e,
                          {2048: w}, Fitness(x, e, 1))
            for label, x, e, w in (("elite 1", 5e-324, math.inf, 5e-324),
                                   ("distribution mean", -1e300, math.nan, math.nan))]
    path = tmp_path / ckpt.VALIDATION_FILE
    path.write_text(validation_csv(rows), encoding="utf-8")

    back = report.read_rows(path, report.VALIDATION_COLUMNS, required=True)
    assert [row["candidate"] for row in back] == ["elite 1", "distribution mean"]
    assert same([row[f"w_{ODD_NAMES[-1]}"] for row in back], [5e-324, math.nan])
    assert same([row["fitness_stderr"] for row in back], [math.inf, math.nan])
    assert same([row["vs_start"] for row in back], [5e-324, -1e300])
    assert same([row["vs_start_stderr"] for row in back], [math.inf, math.nan])


# ---- tune compare --save -----------------------------------------------------------------------


@pytest.mark.parametrize("depth", PLAYING_DEPTHS, ids=str)
def test_saved_games_read_back(tmp_path, depth):
    family = tmp_path / "ñandú 2048" / "odd.py"
    family.parent.mkdir()
    family_file(family.parent)
    spec = PlayerSpec(f"{family}:Odd", {name: x for name, x in zip(ODD_NAMES, FINITE)}, depth,
                      0.9999999999999999)
    games = [GameResult(seed, 2**40, 2**15, 10**9, 5e-324, 2**62, 2**64 - 1)  # 2**15: the top
             for seed in (0, 2**32 - 1)]
    path = tmp_path / "games.json"
    SavedGames(path, [spec]).add(0, games)

    again = SavedGames(path, [spec])
    assert again.missing(0, [0, 2**32 - 1]) == ()
    assert same(again.results(0, [0, 2**32 - 1]), games)


# ---- tune export: json and the tables' manifest ------------------------------------------------


@pytest.mark.parametrize("depth", PLAYING_DEPTHS, ids=str)
def test_exported_json_reads_back_as_the_weights_file(tmp_path, capsys, depth):
    """Strict JSON with the depth in its text form; provenance as documented (docs/cli.md)."""
    family = family_file(tmp_path)
    weights = {name: FINITE[i % len(FINITE)] for i, name in enumerate(ODD_NAMES)}
    provenance = {"floats": FLOATS, "strings": STRINGS[:-1], "bytes": b"\x00\xff",
                  "date": datetime.date(2024, 1, 1)}
    path = tmp_path / "w.yaml"
    write_weights(path, WeightsFile(f"{family}:Odd", weights, depth, provenance))
    family_option = ["--family-file", str(family)]

    def strict(text: str) -> dict:
        return json.loads(text, parse_constant=lambda constant: pytest.fail(constant))

    assert main(["export", str(path), "--format", "json", *family_option]) == 0
    exported = strict(capsys.readouterr().out)
    assert main(["export", str(path), "--format", "tables", "--output", str(tmp_path / "t"),
                 *family_option]) == 0
    manifest = strict((tmp_path / "t" / "manifest.json").read_text(encoding="utf-8"))

    for document in (exported, manifest):
        assert parse_depth(document["depth"]) == depth
        assert same(document["weights"], weights)
        assert same(document["provenance"], {
            "floats": [*FINITE, "Infinity", "-Infinity", "NaN"], "strings": STRINGS[:-1],
            "bytes": "AP8=", "date": "2024-01-01"})
