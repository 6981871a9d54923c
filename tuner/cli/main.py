"""``tune``: the parser, the dispatch to one module per subcommand, and what an error prints.

Any error of ``engine.errors`` prints as one line, ``tune: error: ...``, and exits with the
error's code: 2 for bad input (nothing was computed or written), 1 for a command that could not
finish. ``--debug`` shows the traceback of bad input. An ``OSError`` the machine is to blame for
(a full disk, a read-only directory) is one line too, with exit status 1; one for a name longer
than a file system holds is bad input. Any other exception is
a bug and keeps its traceback (exit status 1). Ctrl-C and SIGTERM end every command with exit
status 130 and one line, from the moment this module starts loading.

``tune --config FILE`` and ``tune --resume RUN_DIR`` are the documented short forms of ``tune run
FILE`` and ``tune resume RUN_DIR``, with the same options.
"""

from __future__ import annotations

import signal
import sys

EXIT_INTERRUPTED = 130
_LOADING_SIGNALS = {signal.SIGINT, signal.SIGTERM}

# Loading the modules takes a moment (numpy, numba, the engine), before main() can install the
# handlers: Ctrl-C and SIGTERM are held back meanwhile (SIGTERM would otherwise end the command
# without a word) and end it as one later would. The threads that libraries start while they
# load (OpenBLAS's) inherit the block, so neither signal is ever delivered to one of them.
_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _LOADING_SIGNALS)
try:
    import argparse
    import errno
    import logging
    import os

    from engine.echo import shorten
    from engine.errors import BadInput, Failure, Tune2048Error
    from tuner import commands, interrupts
    from tuner.cli import (
        compare,
        engine,
        export,
        families,
        noise,
        play,
        report,
        resume,
        run,
        stop,
    )
    from tuner.cli import status as status_command
    from tuner.cli.options import Parser, UsageError, verbosity
    from tuner.errors import ENVIRONMENT_ERRORS
except KeyboardInterrupt:  # raised by hand during the imports: ends the command the same way
    signal.pthread_sigmask(signal.SIG_SETMASK, _mask)
    print("tune: interrupted", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)
_came = [sig for sig in sorted(_LOADING_SIGNALS & signal.sigpending() - _mask)
         if signal.sigtimedwait({sig}, 0) is not None]
signal.pthread_sigmask(signal.SIG_SETMASK, _mask)
if _came:
    print(f"tune: interrupted{' (SIGTERM)' if _came[-1] == signal.SIGTERM else ''}",
          file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)

SUBCOMMANDS = (run, resume, stop, status_command, play, compare, report, noise, export, families,
               engine)
# The short forms' options, given before any subcommand: (option, destination).
SHORT_FORM = (("--config", "config"), ("--resume", "run_dir"), ("--overwrite", "overwrite"),
              ("--family-changed", "family_changed"), ("--workers", "workers"),
              ("--address", "address"), ("--dry-run", "dry_run"))

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
    short.add_argument("--family-changed", dest="main_family_changed", action="store_true",
                       default=None, help="with --resume: resume although the run's family "
                                          "code was edited since it started")
    short.add_argument("--workers", dest="main_workers", type=int, metavar="N",
                       help="local Ray worker CPUs (default: all cores)")
    short.add_argument("--address", dest="main_address", metavar="ADDRESS",
                       help="join a Ray cluster: 'auto' or HOST:PORT")
    short.add_argument("--dry-run", dest="main_dry_run", action="store_true", default=None,
                       help="with --config: print the run's price and exit (tune run FILE "
                            "--dry-run)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in SUBCOMMANDS:
        module.add_parser(subparsers, verbosity())
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line as the handler of its subcommand reads it; the short forms become
    ``run`` and ``resume``."""
    args = build_parser().parse_args(argv)
    args.argv = list(argv)  # the command line as given: what a message says to run again
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
    args.family_changed = bool(args.family_changed)
    args.dry_run = bool(args.dry_run)
    if args.run_dir is not None:
        if args.overwrite:
            raise UsageError("--overwrite starts a new run: it does not go with --resume")
        if args.dry_run:
            raise UsageError("--dry-run prices a new run: it goes with --config, not --resume")
        args.command, args.handler = "resume", resume.handle
    else:
        if args.family_changed:
            raise UsageError("--family-changed resumes a run: it goes with --resume")
        args.command, args.handler = "run", run.handle
    return args


def main(argv: list[str] | None = None) -> int:
    """The ``tune`` command; ``argv`` None: this process's own command line, and the process is
    the command: once its outcome is known, Ctrl-C and SIGTERM are ignored until it exits
    (Python puts back their default action while it shuts down, which would end it without a
    word and with another exit status)."""
    program = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        code = _main(argv, program)
    except KeyboardInterrupt as interrupt:  # one that came while an outcome was printed
        _decided(program)
        print(f"tune: interrupted{interrupts.describe(interrupt)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    _decided(program)
    return code


def _main(argv: list[str], program: bool) -> int:
    args = None
    try:
        interrupts.install()
        args = parse(argv)
        setup_logging(args)
        if args.command is None:
            build_parser().print_help()
            return BadInput.exit_code
        code = args.handler(args)
        interrupts.check()  # one that came and was dropped (in a finalizer, say) still counts
        return code
    except Tune2048Error as err:
        _decided(program)
        if isinstance(err, BadInput) and getattr(args, "debug", False):
            raise
        print(f"tune: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt as interrupt:
        _decided(program)
        print(f"tune: interrupted{interrupts.describe(interrupt)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `tune report RUN | head`: the reader left, nothing to say
        _decided(program)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return 1
    except OSError as err:
        _decided(program)
        if err.errno == errno.ENAMETOOLONG:  # a path given, e.g. --output: no such file can be
            print(f"tune: error: {shorten(str(err.filename))}: a name longer than a file system "
                  "holds (255 bytes a name, 4096 a path)", file=sys.stderr)
            return BadInput.exit_code
        if err.errno not in ENVIRONMENT_ERRORS:
            raise  # a bug: keep the traceback
        where = f"{err.filename}: " if err.filename else ""
        print(f"tune: error: {where}{err.strerror}: make room (or fix the permissions), then "
              f"run it again:\n  {commands.tune(*argv)}", file=sys.stderr)
        return Failure.exit_code


def _decided(program: bool) -> None:
    """The command's outcome is known: a process that is the command ignores Ctrl-C and SIGTERM
    from now on, in every thread (ignored, they are not put back to their default action while
    Python shuts down)."""
    if program:
        for sig in interrupts.SIGNALS:
            signal.signal(sig, signal.SIG_IGN)


def setup_logging(args: argparse.Namespace) -> None:
    """Log lines go to stderr, as they are: only the command line configures logging.
    ``--quiet`` quiets the terminal only: a run's ``run.log`` keeps every line."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.addFilter(_for_terminal)
    handler.setLevel(logging.WARNING if args.quiet else logging.NOTSET)
    log.handlers[:] = [handler]
    log.setLevel(logging.DEBUG if args.verbose else logging.INFO)
    log.propagate = False


def _for_terminal(record: logging.LogRecord) -> bool:
    """Whether a line is shown on the terminal: all but those logged with ``extra={"terminal":
    False}`` (Ray's own messages, which go to run.log only: ``tuner.cluster.events``)."""
    return getattr(record, "terminal", True)


if __name__ == "__main__":
    sys.exit(main())
