"""The ``tune`` command: the tuning job itself, plus the ``play``, ``compare``, ``report``,
``noise``, ``export``, ``families`` and ``family check`` subcommands. Each handler returns an exit
code.

Bad input (an error of one of the types in ``BAD_INPUT``: config, weights file, board, run
directory, family, command-line argument) prints one line per problem and exits with status 2
before anything is computed or written; ``--debug`` shows the traceback. Any other exception is a
bug and keeps its traceback (exit status 1), even a ``ValueError``.
"""

from __future__ import annotations

import sys

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

try:  # loading the modules takes a moment: a Ctrl-C then ends the command as one later would
    import argparse
    import logging
    import os
    import shlex
    from pathlib import Path

    from engine import export, family_cli
    from engine.board import BoardError
    from engine.families import FamilyNotFound, HeuristicError
    from engine.usage import MAX_WORKERS, UsageError, check_address, check_int
    from engine.weights_file import WeightsFileError
    from tuner import checkpoint as ckpt
    from tuner import compare, interrupts, noise, play, report
    from tuner.config import (
        RESUMABLE_CHANGES,
        changed_keys,
        load_config,
        parse_config,
    )
    from tuner.errors import CheckpointError, ConfigError, EvaluationError
except KeyboardInterrupt:
    print("tune: interrupted", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)

# What the command line reports as bad input: one line, exit status 2. The family check's own
# FamilyCheckError joins them once its module (which imports the engine) is loaded: see
# bad_input_errors.
BAD_INPUT: tuple[type[ValueError], ...] = (
    ConfigError, CheckpointError, UsageError, WeightsFileError, BoardError, FamilyNotFound,
    HeuristicError, export.ExportError,
)
# The tuning job's own options, given before any subcommand: (option, destination, takes a value).
MAIN_OPTIONS = (
    ("--config", "main_config", True),
    ("--resume", "main_resume", True),
    ("--overwrite", "main_overwrite", False),
    ("--workers", "main_workers", True),
    ("--address", "main_address", True),
)

log = logging.getLogger("tuner")


class Parser(argparse.ArgumentParser):
    """argparse, reporting a bad command line as one line: ``tune: error: ...``."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"tune: error: {message} (see: {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="tune",
        description="Tune 2048 expectimax heuristics with CMA-ES on Ray, and play the results.",
        epilog="Main job: tune --config FILE, or tune --resume DIR. See also the subcommands; "
               "their options go after their name (tune compare --workers 4 A.yaml B.yaml).",
    )
    parser.add_argument("--config", dest="main_config", metavar="FILE",
                        help="start a tuning run from a YAML config")
    parser.add_argument("--resume", dest="main_resume", metavar="DIR",
                        help="continue a stopped run from its directory")
    parser.add_argument("--overwrite", dest="main_overwrite", action="store_true",
                        help="start afresh in a run directory that holds another run")
    parser.add_argument("--workers", dest="main_workers", type=int,
                        help=f"local Ray workers, 1 to {MAX_WORKERS} (default: all cores)")
    parser.add_argument("--address", dest="main_address",
                        help="join a Ray cluster: 'auto' or HOST:PORT")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("--quiet", action="store_true", help="only warnings and errors")
    verbosity.add_argument("--verbose", action="store_true", help="debug output")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for bad input")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    parser.subcommands = subparsers.choices  # name -> its parser, for refuse_main_options
    play.add_parser(subparsers)
    compare.add_parser(subparsers)
    report.add_parser(subparsers)
    noise.add_parser(subparsers)
    export.add_parser(subparsers)
    family_cli.add_parsers(subparsers)
    parser.set_defaults(handler=None)
    return parser


def bad_input_errors() -> tuple[type[ValueError], ...]:
    """``BAD_INPUT``, with ``FamilyCheckError`` if ``tune family check`` has loaded it (no
    exception of a module that was never imported can have been raised)."""
    check = sys.modules.get("engine.families.check")
    return BAD_INPUT + ((check.FamilyCheckError,) if check is not None else ())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = None
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        setup_logging(args)
        if args.handler is not None:
            refuse_main_options(parser, argv, args)
            return args.handler(args)
        if args.main_config or args.main_resume:  # the tuning job: SIGTERM stops it like Ctrl-C
            interrupts.install()
        if args.main_config and args.main_resume:
            return resume_job(args)
        if args.main_config:
            return start_job(args)
        if args.main_resume:
            return resume_job(args)
        parser.print_help()
        return EXIT_BAD_INPUT
    except ValueError as err:
        if args is None or args.debug or not isinstance(err, bad_input_errors()):
            raise  # a bug, not bad input: keep the traceback
        print(f"tune: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except EvaluationError as err:  # tune compare, tune noise (the tuning job handles its own)
        print(f"tune: error: {err}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("tune: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `tune report RUN | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return EXIT_FAILED


def refuse_main_options(parser: argparse.ArgumentParser, argv: list[str],
                        args: argparse.Namespace) -> None:
    """The tuning job's options placed before a subcommand would be silently ignored (argparse
    keeps the subcommand's own values): refuse them, showing where they go."""
    given = [(option, takes_value) for option, dest, takes_value in MAIN_OPTIONS
             if getattr(args, dest) is not None and getattr(args, dest) is not False]
    if not given:
        return
    at = _subcommand_index(argv, args.command)
    before, after = argv[:at], argv[at + 1:]
    accepted = set(parser.subcommands[args.command]._option_string_actions)
    command = f"tune {args.command}"
    for option, _ in given:
        if option not in accepted:
            raise UsageError(f"{option} is an option of the tuning job (tune {option} ...) and "
                             f"not of {command}: leave it out (see: {command} --help)")
        if any(t == option or t.startswith(f"{option}=") for t in after):
            raise UsageError(f"{option} is given both before and after {args.command}: give it "
                             "once, after the subcommand")
    moved: list[str] = []
    kept: list[str] = []
    i = 0
    while i < len(before):
        option = _main_option(parser, before[i])
        takes_value = dict(given).get(option)
        if option is None or takes_value is None:
            kept.append(before[i])
            i += 1
            continue
        if takes_value and "=" not in before[i]:
            moved += [option, *before[i + 1:i + 2]]
            i += 2
        else:
            moved.append(option + before[i][len(before[i].split("=", 1)[0]):])
            i += 1
    names = " and ".join(option for option, _ in given)
    verb = "belongs" if len(given) == 1 else "belong"
    corrected = shlex.join([*kept, args.command, *moved, *after])
    raise UsageError(f"{names} {verb} after the subcommand: tune {corrected}")


def _subcommand_index(argv: list[str], command: str) -> int:
    """Where the subcommand's name is in ``argv``: the first ``command`` that is not the value
    of a main option."""
    values = {option for option, _, takes_value in MAIN_OPTIONS if takes_value}
    i = 0
    while i < len(argv):
        if argv[i] == command:
            return i
        i += 2 if argv[i] in values else 1
    return argv.index(command)


def _main_option(parser: argparse.ArgumentParser, token: str) -> str | None:
    """The main option a token before the subcommand stands for (argparse also accepts a
    unique prefix, ``--work 4``), or None."""
    if not token.startswith("--"):
        return None
    name = token.split("=", 1)[0]
    options = [option for option, _, _ in MAIN_OPTIONS]
    if name in options:
        return name
    matches = [o for o in parser._option_string_actions if o.startswith(name)]  # as argparse
    return matches[0] if len(matches) == 1 and matches[0] in options else None


def setup_logging(args: argparse.Namespace) -> None:
    level = logging.WARNING if getattr(args, "quiet", False) else (
        logging.DEBUG if getattr(args, "verbose", False) else logging.INFO)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(level)
    log.propagate = False


def with_cli_overrides(config, args: argparse.Namespace):
    """--workers and --address override the config's ray section (they change no result)."""
    changes = {}
    if args.main_workers is not None:
        check_int("--workers", args.main_workers, 1, MAX_WORKERS)
        changes["workers"] = args.main_workers
    if args.main_address is not None:
        check_address(args.main_address)
        changes["address"] = args.main_address
    if not changes:
        return config
    resolved = config.resolved()
    resolved["ray"].update(changes)
    return parse_config(resolved, f"{config.source} (with command-line options)", config.run_dir)


def start_job(args: argparse.Namespace) -> int:
    config = with_cli_overrides(load_config(args.main_config), args)
    run_dir = config.run_dir
    if (run_dir / ckpt.CONFIG_FILE).exists() or (run_dir / ckpt.CHECKPOINT_FILE).exists():
        same = _stored_config_or_none(run_dir) == config.resolved()
        started_only = same and not (run_dir / ckpt.CHECKPOINT_FILE).exists()
        if not args.main_overwrite and not started_only:  # started only: nothing to lose
            hint = (f"resume it with: tune --resume {run_dir}" if same
                    else "pick another run.name, or pass --overwrite to replace it")
            raise CheckpointError(f"{run_dir}: already holds a run; {hint}")
        ckpt.check_writable(run_dir)
        for name in (ckpt.CONFIG_FILE, ckpt.CHECKPOINT_FILE, ckpt.HISTORY_FILE, ckpt.BEST_FILE,
                     ckpt.VALIDATION_FILE, ckpt.LOG_FILE, "convergence.png"):
            try:
                (run_dir / name).unlink(missing_ok=True)
            except OSError as err:
                raise CheckpointError(f"{run_dir / name}: cannot remove: {err.strerror}") from None
    from tuner.run import TuningRun  # the engine and pycma, once the config is known good

    run = TuningRun.start(config, run_dir, progress=_show_progress(args))
    return execute(run, args)


def _stored_config_or_none(run_dir: Path):
    try:
        return ckpt.read_stored_config(run_dir)
    except CheckpointError:
        return None


def resume_job(args: argparse.Namespace) -> int:
    run_dir = Path(args.main_resume)
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: no such run directory")
    stored = ckpt.read_stored_config(run_dir)
    state = ckpt.load_state(run_dir)
    source = str(run_dir / ckpt.CONFIG_FILE)
    config = parse_config(stored, source, run_dir)
    if args.main_config:
        edited = load_config(args.main_config)
        refused = [k for k in changed_keys(stored, edited.resolved())
                   if k not in RESUMABLE_CHANGES]
        if refused:
            raise ConfigError(
                f"{args.main_config}: cannot resume {run_dir} with a changed {', '.join(refused)}: "
                f"only stop conditions and Ray settings may change ({', '.join(RESUMABLE_CHANGES)})"
            )
        config = edited
    config = with_cli_overrides(config, args)
    # the engine and pycma, once the config is known good
    from tuner.run import CMA_STOP_PREFIX, TuningRun

    run = TuningRun.resume(config, run_dir, state, progress=_show_progress(args))
    if state.finished and state.cma_stop:
        criteria = state.cma_stop.removeprefix(CMA_STOP_PREFIX)
        print(f"{run_dir}: the run has finished: pycma's own stop criteria ended it "
              f"({criteria}), so it cannot be continued; its best weights are in "
              f"{run_dir / ckpt.BEST_FILE}")
        return EXIT_OK
    if state.finished and run.stop_reason() is not None:
        print(f"{run_dir}: the run has finished ({state.stop_reason}); to continue it, copy "
              f"{run_dir / ckpt.CONFIG_FILE} to edited.yaml, raise cmaes.max_generations or "
              f"cmaes.max_games there, and run: tune --resume {run_dir} --config edited.yaml")
        return EXIT_OK
    return execute(run, args)


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def execute(run, args: argparse.Namespace) -> int:
    """Run a ``TuningRun`` with a log file in the run directory, SIGTERM handled like Ctrl-C."""
    from tuner.evaluation import evaluator_for
    from tuner.ray_session import ClusterConnectionError

    file_handler = logging.FileHandler(run.run_dir / ckpt.LOG_FILE)
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(file_handler)
    evaluator = None
    try:
        config = run.config
        log.info("run %s: family %s, depth %d, %d tuned parameters, %s",
                 config.run.name, config.family, config.search.depth, len(config.tuned),
                 config.evaluation.games.describe())
        evaluator = evaluator_for(config.ray, [config.family])
        interrupts.check()
        log.info("evaluating on Ray with %d worker CPUs", evaluator.workers)
        state = run.run(evaluator)
        interrupts.check()  # one that came during the last moments of the run
        log.info("done: %s; best weights in %s", state.stop_reason,
                 run.run_dir / ckpt.BEST_FILE)
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (tuner.interrupts)
        if (run.run_dir / ckpt.CHECKPOINT_FILE).exists():
            log.warning("interrupted after generation %d (checkpointed); resume with:\n  tune "
                        "--resume %s", run.state.generation, run.run_dir)
        else:
            log.warning("interrupted before the first generation completed (nothing to "
                        "resume); start it again with:\n  %s", _start_again(run, args))
        return EXIT_INTERRUPTED
    except ClusterConnectionError as err:  # Ray never started: nothing ran, nothing to resume
        log.error("tune: error: %s", err)
        return EXIT_FAILED
    except EvaluationError as err:
        if (run.run_dir / ckpt.CHECKPOINT_FILE).exists():
            log.error("stopped after generation %d (checkpointed): %s\nresume with:\n  tune "
                      "--resume %s", run.state.generation, err, run.run_dir)
        else:
            log.error("stopped before the first generation completed: %s\nstart it again "
                      "with:\n  %s", err, _start_again(run, args))
        return EXIT_FAILED
    finally:
        if evaluator is not None:
            evaluator.close()
        log.removeHandler(file_handler)
        file_handler.close()


def _start_again(run, args: argparse.Namespace) -> str:
    """The command that starts a run again that has no checkpoint yet (a run directory holding
    only the config of the same run is started afresh)."""
    if args.main_config and not args.main_resume:
        return shlex.join(["tune", "--config", args.main_config, *_ray_options(args)])
    return f"tune --resume {run.run_dir}"


def _ray_options(args: argparse.Namespace) -> list[str]:
    options = []
    if args.main_workers is not None:
        options += ["--workers", str(args.main_workers)]
    if args.main_address is not None:
        options += ["--address", args.main_address]
    return options



if __name__ == "__main__":
    sys.exit(main())
