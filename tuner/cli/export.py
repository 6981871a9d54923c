"""``tune export FILE --format c|json|tables``: a weights file for another engine
(``engine.export``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.atomic import unused_path
from engine.export import FORMATS, ExportError, check_output, check_tables_output
from engine.stats import counted
from engine.weights_file import read_weights
from tuner.cli.options import command_with, trusted_families


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "export",
        parents=[common, trusted_families()],
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
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if args.format == "tables" and args.output is None:
        raise ExportError("--format tables needs --output DIR, the directory to write")
    if args.format != "tables" and args.overwrite:
        raise ExportError("--overwrite applies to --format tables only")
    if args.format == "tables":
        check_tables_output(args.output, args.overwrite, _elsewhere(args))
    elif args.output is not None:
        # a device, a FIFO, a link, a committed file...: refused at once
        check_output(args.output, args.weights, _elsewhere(args))
    # here only to keep start-up fast: the engine's families are numpy code
    from engine import finite
    from engine.export import c_source, json_text, write_file, write_tables

    loaded = read_weights(args.weights, args.family_file, family_modules=args.family_module)
    if loaded.engine is not None:
        raise ExportError(f"{args.weights}: holds weights of engine {loaded.engine!r}, which takes "
                          "them through the engine protocol: tune export writes a family's "
                          "weights for engines that do not speak it")
    finite.check_weights_from(args.weights, loaded.family, loaded.weights)
    if args.format == "tables":
        written = write_tables(loaded, args.weights, args.output, args.overwrite)
        print(tables_written(written, args.weights))
        return 0
    text = c_source(loaded, args.weights) if args.format == "c" else json_text(loaded, args.weights)
    if args.output is None:
        sys.stdout.write(text)  # the export itself: nothing else goes to standard output
    else:
        path = write_file(Path(args.output), text)
        print(f"wrote {path}: {WHAT[args.format]} of {args.weights} "
              f"({counted(len(loaded.weights), 'weight')})")
    return 0


WHAT = {"c": "C constants", "json": "JSON"}  # what an export to a file holds, by format


def tables_written(written: list[Path], source: str) -> str:
    """The line that says what a tables export of ``source`` wrote: its directory, the manifest
    and the tables (``write_tables`` returns them, the manifest last)."""
    *tables, manifest = written
    held = (f"and {counted(len(tables), 'line table')} ({tables[0].name}"
            + (f" to {tables[-1].name})" if len(tables) > 1 else ")") if tables else
            "(no line tables)")
    return f"wrote {manifest.parent}: {manifest.name} {held} of {source}"


def _elsewhere(args: argparse.Namespace) -> str:
    """What the refusal of a committed ``--output`` says to run: the same export to a new
    name in the current directory."""
    name = Path(args.output).resolve().name or "export"
    return f"write elsewhere: {command_with(args, '--output', str(unused_path(name)))}"
