"""The ``tune`` command: the tuning job itself, plus the ``play``, ``compare``, ``report``,
``noise``, ``families`` and ``family check`` subcommands. Each handler returns an exit code. Bad input of any kind (a ``ValueError``
from validation: config, weights file, board, checkpoint) prints one line per problem and exits
with status 2 before anything is computed or written; ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path

from engine import family_cli, play_cli
from tuner import checkpoint as ckpt
from tuner import compare, noise, report
from tuner.config import RESUMABLE_CHANGES, changed_keys, load_config, parse_config
from tuner.errors import CheckpointError, ConfigError, EvaluationError

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130

log = logging.getLogger("tuner")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tune",
        description="Tune 2048 expectimax heuristics with CMA-ES on Ray, and play the results.",
        epilog="Main job: tune --config FILE, or tune --resume DIR. See also the subcommands.",
    )
    parser.add_argument("--config", metavar="FILE", help="start a tuning run from a YAML config")
    parser.add_argument("--resume", metavar="DIR", help="continue a stopped run from its directory")
    parser.add_argument("--overwrite", action="store_true",
                        help="start afresh in a run directory that holds another run")
    parser.add_argument("--workers", type=int, help="local Ray workers (default: all cores)")
    parser.add_argument("--address", help="join a Ray cluster: 'auto' or HOST:PORT")
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("--quiet", action="store_true", help="only warnings and errors")
    verbosity.add_argument("--verbose", action="store_true", help="debug output")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for bad input")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    play_cli.add_parser(subparsers)
    compare.add_parser(subparsers)
    report.add_parser(subparsers)
    noise.add_parser(subparsers)
    family_cli.add_parsers(subparsers)
    parser.set_defaults(handler=None)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    setup_logging(args)
    try:
        if args.handler is not None:
            return args.handler(args)
        if args.config and args.resume:
            return resume_job(args)
        if args.config:
            return start_job(args)
        if args.resume:
            return resume_job(args)
        parser.print_help()
        return EXIT_BAD_INPUT
    except ValueError as err:
        if args.debug:
            raise
        print(f"tune: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `tune report RUN | head`: the reader left, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit
        return EXIT_FAILED


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
    if args.workers is not None:
        if args.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {args.workers}")
        changes["workers"] = args.workers
    if args.address is not None:
        changes["address"] = args.address
    if not changes:
        return config
    resolved = config.resolved()
    resolved["ray"].update(changes)
    return parse_config(resolved, f"{config.source} (with command-line options)", config.run_dir)


def start_job(args: argparse.Namespace) -> int:
    config = with_cli_overrides(load_config(args.config), args)
    run_dir = config.run_dir
    if (run_dir / ckpt.CONFIG_FILE).exists() or (run_dir / ckpt.CHECKPOINT_FILE).exists():
        if not args.overwrite:
            same = _stored_config_or_none(run_dir) == config.resolved()
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
    run_dir = Path(args.resume)
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: no such run directory")
    stored = ckpt.read_stored_config(run_dir)
    state = ckpt.load_state(run_dir)
    source = str(run_dir / ckpt.CONFIG_FILE)
    config = parse_config(stored, source, run_dir)
    if args.config:
        edited = load_config(args.config)
        refused = [k for k in changed_keys(stored, edited.resolved())
                   if k not in RESUMABLE_CHANGES]
        if refused:
            raise ConfigError(
                f"{args.config}: cannot resume {run_dir} with a changed {', '.join(refused)}: "
                f"only stop conditions and Ray settings may change ({', '.join(RESUMABLE_CHANGES)})"
            )
        config = edited
    config = with_cli_overrides(config, args)
    from tuner.run import TuningRun  # the engine and pycma, once the config is known good

    run = TuningRun.resume(config, run_dir, state, progress=_show_progress(args))
    if state.finished and run.stop_reason() is not None:
        print(f"{run_dir}: the run has finished ({state.stop_reason}); raise "
              f"cmaes.max_generations or cmaes.max_games in a config and pass it with "
              f"--config to continue it")
        return EXIT_OK
    return execute(run, args)


def _show_progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def execute(run, args: argparse.Namespace) -> int:
    """Run a ``TuningRun`` with a log file in the run directory, SIGTERM handled like Ctrl-C."""
    from tuner.evaluation import RayEvaluator

    file_handler = logging.FileHandler(run.run_dir / ckpt.LOG_FILE)
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(file_handler)
    resume_command = f"tune --resume {run.run_dir}"
    evaluator = None
    try:
        log.info("run %s: family %s, depth %d, %d tuned parameters, %d games per candidate",
                 run.config.name, run.config.family, run.config.depth, len(run.config.tuned),
                 run.config.games)
        evaluator = RayEvaluator(run.config.address, run.config.workers,
                                 run.config.games_per_task, run.config.max_retries,
                                 run.config.no_worker_timeout, families=[run.config.family])
        signal.signal(signal.SIGTERM, _raise_terminated)
        log.info("evaluating on Ray with %d worker CPUs", evaluator.workers)
        state = run.run(evaluator)
        log.info("done: %s; best weights in %s", state.stop_reason,
                 run.run_dir / ckpt.BEST_FILE)
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM through _raise_terminated
        log.warning("interrupted after generation %d (checkpointed); resume with:\n  %s",
                    run.state.generation, resume_command)
        return EXIT_INTERRUPTED
    except EvaluationError as err:
        log.error("stopped after generation %d (checkpointed): %s\nresume with:\n  %s",
                  run.state.generation, err, resume_command)
        return EXIT_FAILED
    finally:
        if evaluator is not None:
            evaluator.close()
        log.removeHandler(file_handler)
        file_handler.close()


def _raise_terminated(signum, frame) -> None:
    """SIGTERM, handled like Ctrl-C: keep the last checkpoint and exit cleanly."""
    raise KeyboardInterrupt("SIGTERM")


if __name__ == "__main__":
    sys.exit(main())
