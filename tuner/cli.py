"""The ``tune`` command: the tuning job itself, plus the ``play``, ``compare``, ``report`` and
``noise`` subcommands. Each handler returns an exit code; bad input of any kind (a ``ValueError``
from validation) prints one line and exits with status 2 (``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import sys

from engine import play_cli

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tune",
        description="Tune 2048 expectimax heuristics with CMA-ES, and play with the results.",
    )
    parser.add_argument("--config", metavar="FILE", help="start a tuning run from a YAML config")
    parser.add_argument("--resume", metavar="DIR", help="continue a stopped run from its directory")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for bad input")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    play_cli.add_parser(subparsers)
    parser.set_defaults(handler=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.handler is not None:
            return args.handler(args)
        if args.config or args.resume:
            print("tune: the tuning job is not built yet", file=sys.stderr)
            return 1
        parser.print_help()
        return EXIT_BAD_INPUT
    except ValueError as err:
        if args.debug:
            raise
        print(f"tune: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("tune: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
