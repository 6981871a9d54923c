"""``tune``: the parser, the dispatch to one module per subcommand, and what an error prints.

Any error of ``engine.errors`` prints as one line, ``tune: error: ...``, and exits with the
error's code: 2 for bad input (nothing was computed or written), 1 for a command that could not
finish. ``--debug`` shows the traceback of bad input. Any other exception is a bug and keeps its
traceback (exit status 1). Ctrl-C and SIGTERM end every command with exit status 130 and one
line.

``tune --config FILE`` and ``tune --resume RUN_DIR`` are the documented short forms of ``tune run
FILE`` and ``tune resume RUN_DIR``, with the same options.
"""

from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130

try:  # loading the modules takes a moment: a Ctrl-C then ends the command as one later would
    import argparse
    import logging
    import os

    from cli import compare, export, families, noise, play, report, resume, run
    from cli.options import Parser, UsageError, verbosity
    from engine.errors import BadInput, Tune2048Error
    from tuner import interrupts
except KeyboardInterrupt:
    print("tune: interrupted", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)

SUBCOMMANDS = (run, resume, play, compare, report, noise, export, families)
# The short forms' options, given before any subcommand: (option, destination).
SHORT_FORM = (("--config", "config"), ("--resume", "run_dir"), ("--overwrite", "overwrite"),
              ("--workers", "workers"), ("--address", "address"))

log = logging.getLogger("tuner")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tune",
        parents=[verbosity(default=False)],
        description="Tune 2048 expectimax heuristics with CMA-ES on Ray, and play the results.",
        epilog="Start a run: tune run FILE (or tune --config FILE); continue one: tune resume "
               "RUN_DIR (or tune --resume RUN_DIR). A subcommand's options go after its name "
               "(tune compare --workers 4 A.yaml B.yaml); tune COMMAND --help says more.",
    )
    short = parser.add_argument_group("the short form of tune run and tune resume")
    short.add_argument("--config", dest="main_config", metavar="FILE",
                       help="start a tuning run from a YAML config (tune run FILE)")
    short.add_argument("--resume", dest="main_run_dir", metavar="RUN_DIR",
                       help="continue a stopped run (tune resume RUN_DIR); with --config, a "
                            "config whose stop conditions or Ray settings changed")
    short.add_argument("--overwrite", dest="main_overwrite", action="store_true", default=None,
                       help="replace the run in the run directory once the new run has "
                            "written its first checkpoint")
    short.add_argument("--workers", dest="main_workers", type=int, metavar="N",
                       help="local Ray worker CPUs (default: all cores)")
    short.add_argument("--address", dest="main_address", metavar="ADDRESS",
                       help="join a Ray cluster: 'auto' or HOST:PORT")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(subparsers, verbosity())
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line as the handler of its subcommand reads it; the short forms become
    ``run`` and ``resume``."""
    args = build_parser().parse_args(argv)
    given = [option for option, dest in SHORT_FORM if getattr(args, f"main_{dest}") is not None]
    if args.command is not None:
        if given:
            raise UsageError(f"{given[0]} before {args.command!r}: a subcommand's options go "
                             f"after its name (see: tune {args.command} --help)")
        return args
    if args.main_config is None and args.main_run_dir is None:
        return args
    for option, dest in SHORT_FORM:
        setattr(args, dest, getattr(args, f"main_{dest}"))
    args.overwrite = bool(args.overwrite)
    if args.run_dir is not None:
        if args.overwrite:
            raise UsageError("--overwrite starts a new run: it does not go with --resume")
        args.command, args.handler = "resume", resume.handle
    else:
        args.command, args.handler = "run", run.handle
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    try:
        interrupts.install()
        args = parse(argv)
        setup_logging(args)
        if args.command is None:
            build_parser().print_help()
            return BadInput.exit_code
        return args.handler(args)
    except Tune2048Error as err:
        if isinstance(err, BadInput) and getattr(args, "debug", False):
            raise
        print(f"tune: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as interrupt:
        print(f"tune: interrupted{interrupts.describe(interrupt)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `tune report RUN | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 1


def setup_logging(args: argparse.Namespace) -> None:
    """Log lines go to stderr, as they are: only the command line configures logging."""
    level = logging.WARNING if args.quiet else logging.DEBUG if args.verbose else logging.INFO
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(level)
    log.propagate = False


if __name__ == "__main__":
    sys.exit(main())
