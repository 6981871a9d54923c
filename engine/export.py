"""Exports of a weights file (``tune export``): as C constants, as JSON, or as line tables for another engine.

- ``c``: ``static const double`` definitions to paste into a C or C++ engine; the ``classic``
  family's carry the names that nneonneo/2048-ai's heuristic uses (``CLASSIC_C_NAMES``).
- ``json``: the weights file's content as JSON, for tools that read no YAML.
- ``tables``: the heuristic itself, its line tables as ``.npy`` files and a ``manifest.json`` that
  defines every term (``CONVENTIONS``), so a table-driven engine in any language can play any
  family's weights without reimplementing the family.

Everything exported reads back as the weights file says. The depth is its text form
(``engine.depth.to_yaml``: ``3``, ``"auto"``, ``"nodes:150000"``), which
``engine.depth.parse_depth`` reads back. JSON documents (``json``, the tables' manifest) are
strict JSON (RFC 8259), which has no NaN or infinity: the weights are finite (the weights
file's contract), and a non-finite number in the free-form provenance is written as the string
``"NaN"``, ``"Infinity"`` or ``"-Infinity"``, as Protocol Buffers' JSON mapping writes them.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import io
import json
import math
import os
import re
from pathlib import Path

from engine.atomic import UnwritableTarget, atomic_write_all, check_target, check_untracked
from engine.depth import to_yaml
from engine.errors import BadInput
from engine.weights_file import WeightsFile

FORMATS = ("c", "json", "tables")
JSON_MARKER = "tune2048-export"
TABLES_MARKER = "tune2048-tables"
EXPORT_VERSION = 1
MANIFEST = "manifest.json"
TABLE_FILE = re.compile(r"table\d+\.npy")

# classic's parameters under the names of nneonneo/2048-ai's constants (2048.cpp)
CLASSIC_C_NAMES = {
    "lost_penalty": "SCORE_LOST_PENALTY",
    "monotonicity_power": "SCORE_MONOTONICITY_POWER",
    "monotonicity_weight": "SCORE_MONOTONICITY_WEIGHT",
    "sum_power": "SCORE_SUM_POWER",
    "sum_weight": "SCORE_SUM_WEIGHT",
    "merges_weight": "SCORE_MERGES_WEIGHT",
    "empty_weight": "SCORE_EMPTY_WEIGHT",
}

# What a manifest's terms mean; the definitions are engine.heuristic's, made self-contained.
CONVENTIONS = {
    "value": "a board's heuristic value is the sum of its terms, before the search_floor",
    "rank": "a cell holds its rank: 0 when empty, log2(tile) otherwise (tile 2 is rank 1)",
    "line_index": "a line's 4 ranks packed 4 bits each, its first cell in the lowest nibble: "
                  "r0 | r1 << 4 | r2 << 8 | r3 << 12; a row's first cell is its leftmost cell, "
                  "a column's its top cell",
    "lines": "8 lines per board: rows 0-3 top to bottom, each read left to right, then columns "
             "0-3 left to right, each read top to bottom",
    "tables": "each table file is a .npy array of 65536 little-endian float64, indexed by line; "
              "a file named by several lines or terms is one array",
    "layouts": {
        "shared": "1 table for all 8 lines",
        "rows_cols": "2 tables: the first for the 4 rows, the second for the 4 columns",
        "per_row": "4 tables, one per row top to bottom; the columns add nothing",
        "per_line": "8 tables, one per line in line order",
    },
    "line_sum": "A = the sum over the layout's lines of table[line]; the term is its combiner "
                "applied to A with the term's weight w and exponent p",
    "combiners": {
        "identity": "w * A",
        "log2": "w * log2(A'), where A' = max(A, combiner_floor)",
        "reciprocal": "w / A'",
        "power": "w * A' ** p",
        "per_tile": "w * A / n, n the number of non-empty cells (0 on an empty board)",
    },
    "board_term": "a whole-board term with weight w and v(rank) = values[rank]; top is the largest "
                  "rank on the board, head the rank of the top-left cell",
    "board_terms": {
        "head_penalty": "-w * (v(top) - v(head))**2 when head != top, else 0",
        "corner": "w * v(top) when head == top, else 0",
        "top_tile": "w * v(top)",
        "mean_tile": "w * the mean of 2**rank over the non-empty cells (0 on an empty board); "
                     "values are not used",
    },
}


class ExportError(BadInput):
    """An export cannot be made as asked; the message names the option or path and why."""


def c_source(loaded: WeightsFile, source: str | os.PathLike) -> str:
    """C definitions of the weights, one ``static const double`` each; ``source`` names the
    weights file in the header comment.

    Each literal is Python's shortest round-trip decimal, which a C compiler reads back as the
    identical double, so C code built from them reproduces our tables.
    """
    # here only to keep start-up fast: the families are numpy code, which tune export's
    # arguments need not load to be checked
    from engine.families import get_family
    from engine.families.classic import CLASSIC

    family = get_family(loaded.family)
    name = family.name or loaded.family
    origin = f"family {name}" + ("" if name == loaded.family else f" ({loaded.family})")
    made = ", ".join(f"{key} {loaded.provenance[key]}" for key in ("status", "run")
                     if key in loaded.provenance)
    comment = [f"Generated by tune2048 from {source}: {origin}, depth {to_yaml(loaded.depth)}"
               + (f"; provenance: {made}." if made else "."), ""]
    if family is CLASSIC:
        names = CLASSIC_C_NAMES
        comment += ["The constants of nneonneo/2048-ai's heuristic: replace its definitions.",
                    "It declares them float; double keeps these values exact."]
    else:
        names = {param: re.sub(r"\W", "_", f"TUNE2048_{name}_{param}".upper(), flags=re.ASCII)
                 for param in loaded.weights}
        comment.append(f"The {name} heuristic's tables are best exported with --format tables.")
    lines = ["/*", *(f" * {_comment(line)}" if line else " *" for line in comment), " */"]
    lines += [f"static const double {names[param]} = {float(value)!r};"
              for param, value in loaded.weights.items()]
    return "\n".join(lines) + "\n"


def json_text(loaded: WeightsFile, source: str | os.PathLike) -> str:
    """The weights file as a JSON document, parameters in the family's order; ``source`` names
    the weights file in errors."""
    return strict_json(_header(loaded, source, JSON_MARKER))


def strict_json(document: dict) -> str:
    """``document`` as strict JSON text: ``ValueError`` on a NaN or an infinity, which a
    strict reader refuses (``_as_json`` has turned the provenance's into strings already)."""
    return json.dumps(document, indent=2, allow_nan=False) + "\n"


def _header(loaded: WeightsFile, source: str | os.PathLike, marker: str) -> dict:
    """What both exported documents begin with: their marker, then the weights file's content
    (``source`` names it in errors)."""
    from engine.families import get_family  # here only to keep start-up fast (numpy)

    return {
        "format": marker,
        "version": EXPORT_VERSION,
        "family": loaded.family,
        "family_name": get_family(loaded.family).name or loaded.family,
        "depth": to_yaml(loaded.depth),
        "weights": loaded.weights,
        "provenance": _as_json(loaded.provenance, f"{source}: provenance"),
    }


def _as_json(value, path: str):
    """``value`` in the types JSON has. A weights file's provenance is free-form YAML, whose
    tagged values JSON lacks: ``!!binary`` becomes its base64 text (as the YAML wrote it),
    ``!!timestamp`` its ISO 8601 text, ``!!set`` a sorted list, a NaN or an infinity a string
    (``_non_finite``); ``ExportError`` names any other value by its key path, and two keys that
    JSON would write alike (``1`` and ``"1"``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return _non_finite(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return _as_json_object(value, path)
    if isinstance(value, (list, tuple)):
        return [_as_json(item, f"{path}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return [_as_json(item, f"{path}[]") for item in sorted(value, key=repr)]
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    raise ExportError(f"{path}: a {type(value).__name__} value has no JSON form; remove it "
                      "from the weights file or export with --format c")


def _non_finite(value: float) -> str:
    """A NaN or an infinity as Protocol Buffers' JSON mapping writes it: strict JSON has none."""
    return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"


def _as_json_object(mapping: dict, path: str) -> dict[str, object]:
    """A mapping as a JSON object, whose keys are strings: a reader of the JSON would keep only
    the last of two keys written alike, so they are refused."""
    rendered: dict[str, object] = {}
    for key, item in mapping.items():
        text = _json_key(key, path)
        if text in rendered:
            raise ExportError(f"{path}: two keys are both {text!r} in JSON, which would keep only "
                              "one of them; rename one in the weights file")
        rendered[text] = _as_json(item, f"{path}.{key}")
    return rendered


def _json_key(key, path: str) -> str:
    """A key as JSON writes it: a string (json.dumps would write ``1`` as ``"1"`` and ``True`` as
    ``"true"`` itself; this does it first, so that two keys written alike are seen)."""
    if isinstance(key, str):
        return key
    rendered = _as_json(key, f"{path} (a key)")
    return rendered if isinstance(rendered, str) else json.dumps(rendered)


def write_tables(loaded: WeightsFile, source: str | os.PathLike, directory: str | os.PathLike,
                 overwrite: bool = False) -> list[Path]:
    """Write the heuristic's line tables and ``manifest.json`` into ``directory``, created if
    missing; return the files written, the manifest last. ``source`` names the weights file in
    errors.

    A directory holding a previous tables export is replaced (its tables that this export does
    not write are removed); any other non-empty directory is refused unless ``overwrite``, and
    then nothing is removed. Each file is written atomically, the manifest after its tables.
    """
    import numpy as np  # here, as the families, only to keep start-up fast

    from engine.families import family_code, get_family
    from engine.heuristic import COMBINER_FLOOR
    from engine.workspace import FLOOR_FRACTION, FLOOR_MIN, check  # imports the compiled engine

    family = get_family(loaded.family)
    with family_code(family, "heuristic()"):
        heuristic = family.heuristic(family.vector(loaded.weights))
    check(heuristic)
    directory = Path(directory)
    tables: dict[int, tuple[str, np.ndarray]] = {}  # id(table) -> (file, table): each one once

    def file_of(table: np.ndarray) -> str:
        if id(table) not in tables:
            tables[id(table)] = (f"table{len(tables)}.npy", table)
        return tables[id(table)][0]

    terms = [_term_entry(term, file_of) for term in heuristic.terms]
    scale = heuristic.scale()
    manifest = {
        **_header(loaded, source, TABLES_MARKER),
        "conventions": CONVENTIONS,
        "combiner_floor": COMBINER_FLOOR,
        "search_floor": {
            "scale": scale,
            "tau": max(scale * FLOOR_FRACTION, FLOOR_MIN),
            "rule": f"the search scores a leaf whose value h is below tau = max(scale * "
                    f"{FLOOR_FRACTION:g}, {FLOOR_MIN:g}) as tau / (2 - h / tau): positive and "
                    "increasing, so every live board outranks a dead one (worth 0); scale is the "
                    "heuristic's size as engine.heuristic.Heuristic.scale measures it",
        },
        "terms": terms,
    }
    stale = _previous_tables(directory, overwrite)
    files = []
    for name, table in tables.values():
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(table, dtype="<f8"), allow_pickle=False)
        files.append((directory / name, buffer.getvalue()))
    files.append((directory / MANIFEST, strict_json(manifest)))
    created = not directory.exists()
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ExportError(f"{directory}: cannot create the directory: {err.strerror}") from None
    try:
        write_files(files)  # the manifest last: a previous export stays whole until all is written
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                directory.rmdir()
        raise
    written = [path for path, _data in files]
    for path in stale - set(written):
        path.unlink(missing_ok=True)
    return written


def _term_entry(term, file_of) -> dict:
    from engine.heuristic import BoardTerm  # here only to keep start-up fast (numpy)

    if isinstance(term, BoardTerm):
        return {"kind": "board_term", "name": term.name, "weight": float(term.weight),
                "values": [float(v) for v in term.rank_values()]}
    return {"kind": "line_sum", "layout": term.layout,
            "tables": [file_of(table) for table in term.tables], "combiner": term.combiner,
            "weight": float(term.weight), "exponent": float(term.exponent)}


def _previous_tables(directory: Path, overwrite: bool) -> set[Path]:
    """The tables of a previous export in ``directory`` (empty if none); raises ExportError for
    a directory that may not be written into."""
    if directory.is_symlink() and not directory.exists():
        raise ExportError(f"{directory}: --output for --format tables is a symbolic link to "
                          f"{os.readlink(directory)}, which does not exist")
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"{directory}: --output for --format tables must be a directory")
    try:
        if not directory.is_dir() or not any(directory.iterdir()):
            return set()
        manifest = directory / MANIFEST
        # a regular file only: a FIFO named manifest.json would block the read for ever
        previous = json.loads(manifest.read_text(encoding="utf-8")) \
            if manifest.is_file() and not manifest.is_symlink() else None
    except (OSError, ValueError) as err:
        if isinstance(err, OSError) and err.filename in (str(directory), directory):
            raise ExportError(f"{directory}: cannot read: {err.strerror}") from None
        previous = None
    if isinstance(previous, dict) and previous.get("format") == TABLES_MARKER:
        return {path for path in directory.iterdir() if TABLE_FILE.fullmatch(path.name)}
    if overwrite:
        return set()
    raise ExportError(f"{directory}: not empty and not a tables export; use --overwrite to "
                      "write into it anyway")


def check_tables_output(directory: str | os.PathLike, overwrite: bool, instead: str = "") -> None:
    """Refuse a ``--format tables`` output directory before anything is read or computed,
    among others one where git tracks a file the export would replace or remove (its manifest
    or a table: ``engine.atomic.check_untracked``, ending with ``instead``)."""
    directory = Path(directory)
    _previous_tables(directory, overwrite)
    if directory.is_dir():
        for path in directory.iterdir():
            if path.name == MANIFEST or TABLE_FILE.fullmatch(path.name):
                check_untracked(path, instead)


def check_output(path: str | os.PathLike, source: str | os.PathLike | None = None,
                 instead: str = "") -> None:
    """Refuse an ``--output`` file that cannot or must not be written (``engine.atomic
    .check_target``: a device, a FIFO, a symbolic link, a directory, a missing or unwritable
    directory, a file git tracks, whose message ends with ``instead``), or that is the weights
    file ``source`` itself, before anything is read or computed."""
    try:
        check_target(path, hint=" (leave out --output to write to standard output)",
                     instead=instead)
    except UnwritableTarget as err:
        raise ExportError(str(err)) from None
    try:
        same = source is not None and os.path.samefile(path, source)
    except OSError:
        same = False  # one of them does not exist (a baseline's name, a new file)
    if same:
        raise ExportError(f"{path}: cannot write: it is the weights file being exported; give "
                          "another --output")


def write_file(path: Path, data: str | bytes) -> Path:
    """Write an export file atomically; ``ExportError`` says why it cannot be written."""
    write_files([(path, data)])
    return path


def write_files(files: list[tuple[Path, str | bytes]]) -> None:
    """Write export files all or none (``engine.atomic.atomic_write_all``); ``ExportError``
    says why they cannot be written."""
    try:
        atomic_write_all(files)
    except UnwritableTarget as err:
        raise ExportError(str(err)) from None
    except OSError as err:
        where = err.filename or files[0][0]
        raise ExportError(f"{where}: cannot write: {err.strerror or err}") from None


def _comment(text: str) -> str:
    """``text`` made safe inside a C block comment: one line, no ``*/``."""
    return re.sub(r"[\x00-\x1f\x7f]", " ", text).replace("*/", "* /")
