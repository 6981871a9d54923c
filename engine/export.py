"""``tune export``: a weights file as C constants, as JSON, or as line tables for another engine.

- ``c``: ``static const double`` definitions to paste into a C or C++ engine; the ``classic``
  family's carry the names that nneonneo/2048-ai's heuristic uses (``CLASSIC_C_NAMES``).
- ``json``: the weights file's content as JSON, for tools that read no YAML.
- ``tables``: the heuristic itself, its line tables as ``.npy`` files and a ``manifest.json`` that
  defines every term (``CONVENTIONS``), so a table-driven engine in any language can play any
  family's weights without reimplementing the family.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import sys
from pathlib import Path

import numpy as np

from engine import finite
from engine.atomic import atomic_write
from engine.families import get_family
from engine.families.classic import CLASSIC
from engine.heuristic import COMBINER_FLOOR, BoardTerm
from engine.weights_file import WeightsFile, read_weights

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


class ExportError(ValueError):
    """An export cannot be made as asked; the message names the option or path and why."""


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a weights file as C constants, JSON, or line tables for another engine",
        description="Export a weights file: c (constants for a C/C++ engine; classic uses "
                    "nneonneo/2048-ai's names), json, or tables (.npy line tables and a "
                    "manifest.json defining the heuristic, for any table-driven engine).",
    )
    parser.add_argument("weights", metavar="FILE", help="weights file to export")
    parser.add_argument("--format", required=True, choices=FORMATS, help="what to write")
    parser.add_argument(
        "--output", metavar="PATH",
        help="c, json: file to write (default: standard output); tables: directory (required)",
    )
    parser.add_argument(
        "--overwrite", action="store_true",
        help="tables: write into a non-empty directory that holds no previous tables export",
    )
    parser.add_argument(
        "--family-file", action="append", default=[], metavar="PY",
        help="allow the weights file's family to be imported from this file (a weights file "
             "alone never runs code)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.format == "tables" and args.output is None:
        raise ExportError("--format tables needs --output DIR, the directory to write")
    if args.format != "tables" and args.overwrite:
        raise ExportError("--overwrite applies to --format tables only")
    loaded = read_weights(args.weights, args.family_file)
    finite.check_weights_from(args.weights, loaded.family, loaded.weights)
    if args.format == "tables":
        write_tables(loaded, args.output, args.overwrite)
        return 0
    text = c_source(loaded, args.weights) if args.format == "c" else json_text(loaded)
    if args.output is None:
        sys.stdout.write(text)
    else:
        _write(Path(args.output), text)
    return 0


def c_source(loaded: WeightsFile, source: str | os.PathLike) -> str:
    """C definitions of the weights, one ``static const double`` each; ``source`` names the
    weights file in the header comment.

    Each literal is Python's shortest round-trip decimal, which a C compiler reads back as the
    identical double, so C code built from them reproduces our tables.
    """
    family = get_family(loaded.family)
    name = family.name or loaded.family
    origin = f"family {name}" + ("" if name == loaded.family else f" ({loaded.family})")
    made = ", ".join(f"{key} {loaded.provenance[key]}" for key in ("status", "run")
                     if key in loaded.provenance)
    comment = [f"Generated by tune2048 from {source}: {origin}, depth {loaded.depth}"
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


def json_text(loaded: WeightsFile) -> str:
    """The weights file as a JSON document, parameters in the family's order."""
    return json.dumps(_header(loaded, JSON_MARKER), indent=2) + "\n"


def _header(loaded: WeightsFile, marker: str) -> dict:
    """What both exported documents begin with: their marker, then the weights file's content."""
    return {
        "format": marker,
        "version": EXPORT_VERSION,
        "family": loaded.family,
        "family_name": get_family(loaded.family).name or loaded.family,
        "depth": loaded.depth,
        "weights": loaded.weights,
        "provenance": loaded.provenance,
    }


def write_tables(loaded: WeightsFile, directory: str | os.PathLike,
                 overwrite: bool = False) -> list[Path]:
    """Write the heuristic's line tables and ``manifest.json`` into ``directory``, created if
    missing; return the files written, the manifest last.

    A directory holding a previous tables export is replaced (its tables that this export does
    not write are removed); any other non-empty directory is refused unless ``overwrite``, and
    then nothing is removed. Each file is written atomically, the manifest after its tables.
    """
    from engine.workspace import FLOOR_FRACTION, FLOOR_MIN, check  # imports the compiled engine

    family = get_family(loaded.family)
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
        **_header(loaded, TABLES_MARKER),
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
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ExportError(f"{directory}: cannot create the directory: {err.strerror}") from None
    written = []
    for name, table in tables.values():
        buffer = io.BytesIO()
        np.save(buffer, np.ascontiguousarray(table, dtype="<f8"), allow_pickle=False)
        written.append(_write(directory / name, buffer.getvalue()))
    written.append(_write(directory / MANIFEST, json.dumps(manifest, indent=2) + "\n"))
    for path in stale - set(written):
        path.unlink(missing_ok=True)
    return written


def _term_entry(term, file_of) -> dict:
    if isinstance(term, BoardTerm):
        return {"kind": "board_term", "name": term.name, "weight": float(term.weight),
                "values": [float(v) for v in term.rank_values()]}
    return {"kind": "line_sum", "layout": term.layout,
            "tables": [file_of(table) for table in term.tables], "combiner": term.combiner,
            "weight": float(term.weight), "exponent": float(term.exponent)}


def _previous_tables(directory: Path, overwrite: bool) -> set[Path]:
    """The tables of a previous export in ``directory`` (empty if none); raises ExportError for
    a directory that may not be written into."""
    if directory.exists() and not directory.is_dir():
        raise ExportError(f"{directory}: --output for --format tables must be a directory")
    if not directory.is_dir() or not any(directory.iterdir()):
        return set()
    try:
        previous = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        previous = None
    if isinstance(previous, dict) and previous.get("format") == TABLES_MARKER:
        return {path for path in directory.iterdir() if TABLE_FILE.fullmatch(path.name)}
    if overwrite:
        return set()
    raise ExportError(f"{directory}: not empty and not a tables export; use --overwrite to "
                      "write into it anyway")


def _write(path: Path, data: str | bytes) -> Path:
    try:
        atomic_write(path, data)
    except OSError as err:
        raise ExportError(f"{path}: cannot write: {err.strerror or err}") from None
    return path


def _comment(text: str) -> str:
    """``text`` made safe inside a C block comment: one line, no ``*/``."""
    return re.sub(r"[\x00-\x1f\x7f]", " ", text).replace("*/", "* /")
