"""``tune resume RUN_DIR`` (short form: ``tune --resume RUN_DIR``): continue a stopped run from
its last checkpoint, exactly as it would have gone on.

``--config FILE`` gives a config whose stop conditions or Ray settings changed (a raised
``cmaes.max_generations``, say); any other change is refused with the changed keys named.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from engine.echo import echo
from engine.errors import BadInput
from tuner import commands
from tuner.cli import job
from tuner.cli.options import ray_options, with_options
from tuner.config import RESUMABLE_CHANGES, changed_keys, load_config, parse_config, value_at
from tuner.errors import CheckpointError, ConfigError
from tuner.store import checkpoint as ckpt


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "resume", parents=[common, ray_options()], help="continue a stopped run",
        description="Continue a stopped run from its last checkpoint.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run's directory")
    parser.add_argument("--config", metavar="FILE",
                        help="the run's config with changed stop conditions or Ray settings")
    parser.add_argument("--family-changed", action="store_true",
                        help="resume although the run's family file or module was edited since "
                             "the run started (its next games use the new code)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    # after the arguments: only to keep start-up fast
    from tuner.store.run_dir import Lock, staging_path
    from tuner.store.store import DirectoryStore

    if not run_dir.is_dir():
        staging = staging_path(run_dir)
        if staging.is_dir() and not staging.is_symlink():
            Lock(staging, named=run_dir).release()  # refused, naming the process, if one runs
        raise CheckpointError(f"{run_dir}: no such run directory")
    store = DirectoryStore.existing(run_dir)
    try:
        return _resume(store, args)
    finally:
        store.close()


def _resume(store, args: argparse.Namespace) -> int:
    run_dir = store.directory
    stored = ckpt.read_stored_config(run_dir)
    state = ckpt.load_state(run_dir, stored)
    config = parse_config(stored, str(run_dir / ckpt.CONFIG_FILE), run_dir)
    if args.config:
        edited = load_config(args.config)
        wanted = edited.resolved()
        refused = [k for k in changed_keys(stored, wanted) if k not in RESUMABLE_CHANGES]
        if refused:
            changes = ", ".join(f"{k} (the run's {_shown(value_at(stored, k))}, here "
                                f"{_shown(value_at(wanted, k))})" for k in refused)
            raise ConfigError(
                f"{args.config}: cannot resume {run_dir} with a changed {changes}: only stop "
                f"conditions and Ray settings may change ({', '.join(RESUMABLE_CHANGES)}); "
                f"resume it with its own settings: {commands.tune('resume', run_dir)}")
        config = edited
    config = with_options(config, args)
    checkpoint = _identity(run_dir / ckpt.CHECKPOINT_FILE)
    try:
        return _continue(config, store, state, args)
    finally:
        # TuningRun.resume stores a changed config (an edited stop condition, --workers,
        # --address) at once, but the checkpoint keeps the old one until the next generation
        # completes: a resume that ends before that (Ray not reached, Ctrl-C, a finished run)
        # puts the stored config back, or the run could not be resumed again ("checkpoint
        # belongs to another run").
        if _identity(run_dir / ckpt.CHECKPOINT_FILE) == checkpoint:
            _put_back(run_dir, stored)


def _shown(value) -> str:
    return "not set" if value is None else echo(value)


def _continue(config, store, state, args: argparse.Namespace) -> int:
    from tuner.loop.run import CMA_STOP_PREFIX, TuningRun  # the engine and pycma, once known good

    run_dir = store.directory
    run = TuningRun.resume(config, store, state, progress=job.show_progress(args),
                           family_changed=args.family_changed)
    if state.finished and state.cma_stop:
        criteria = state.cma_stop.removeprefix(CMA_STOP_PREFIX)
        print(f"{run_dir}: the run has finished: pycma's own stop criteria ended it "
              f"({criteria}), so it cannot be continued; {_best_weights(run_dir)}")
        return 0
    if state.finished and run.stop_reason() is not None:
        copy = shlex.join(["cp", str(run_dir / ckpt.CONFIG_FILE), "edited.yaml"])
        print(f"{run_dir}: the run has finished ({state.stop_reason}); to continue it: {copy}, "
              f"raise cmaes.max_generations or cmaes.max_games in edited.yaml, and run: "
              f"{commands.tune('resume', run_dir, '--config', 'edited.yaml')}")
        return 0
    return job.execute(run, args)


def _best_weights(run_dir: Path) -> str:
    """Where a finished run's validated weights are, said only of files that are there."""
    best, table = run_dir / ckpt.BEST_FILE, run_dir / ckpt.VALIDATION_FILE
    if best.is_file():
        return f"its best weights are in {best}"
    if table.is_file():
        return f"its {ckpt.BEST_FILE} is missing; {table} lists the validated candidates"
    return f"its {ckpt.BEST_FILE} and {ckpt.VALIDATION_FILE} are missing"


def _identity(path: Path) -> tuple[int, int, int] | None:
    """Which file is at ``path`` (an atomic write puts a new one there)."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns, found.st_size


def _put_back(run_dir: Path, stored: dict) -> None:
    """Write the run's stored config back if it was changed (atomically; if that fails, the
    error already on its way says more)."""
    try:
        if ckpt.read_stored_config(run_dir) != stored:
            ckpt.write_config(run_dir, stored)
    except (OSError, BadInput):
        pass
