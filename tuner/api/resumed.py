"""A stopped run continued from its last checkpoint, exactly as it would have gone on: ``tune
resume RUN_DIR`` and ``resume`` from Python.

An edited config (``tune resume --config FILE``) may change the run's stop conditions or Ray
settings (a raised ``cmaes.max_generations``, say); any other change is refused with the changed
keys named. A path in it (``engine.cwd``, a ``file.py:Class`` family) is relative to FILE's
folder, as in every config, or written as the run's ``config.yaml`` writes it, relative to the run
directory: a copy of ``config.yaml`` means the run's places from any folder. Either way it must
lead where the run's does. A run that has finished is not run again: the outcome says how to
continue it.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.echo import echo
from engine.errors import BadInput
from tuner.api.job import FINISHED, Outcome, carry_out
from tuner.api.launch import RESUME, Launch
from tuner.config import (
    RESUMABLE_CHANGES,
    RunConfig,
    changed_keys,
    parse_config,
    read_document,
    value_at,
)
from tuner.errors import CheckpointError, ConfigError
from tuner.store import checkpoint as ckpt

if TYPE_CHECKING:
    from tuner.loop.observers import Observer
    from tuner.store.checkpoint import RunState
    from tuner.store.store import DirectoryStore


def resume(run_dir: str | os.PathLike, *, config: str | os.PathLike | None = None,
           family_changed: bool = False, workers: int | None = None,
           address: str | None = None, observers: Sequence[Observer] = (),
           progress: bool = False) -> Outcome:
    """Continue the run in ``run_dir`` from its last checkpoint and carry it out, as ``tune
    resume RUN_DIR`` does, with the same files, lines and outcome. ``config``: the run's config
    with changed stop conditions or Ray settings (``--config``); ``family_changed``: resume
    although the run's family code was edited (``--family-changed``); the rest as ``run``'s.

    Raises ``BadInput`` (``CheckpointError``, ``ConfigError``, ...) for what ``tune`` refuses
    with exit status 2."""
    launch = Launch.of(RESUME, config, family_changed=family_changed, workers=workers,
                       address=address)
    return resume_run(run_dir, launch, progress, observers)


def resume_run(run_dir: str | os.PathLike, launch: Launch, progress: bool = False,
               observers: Sequence[Observer] = ()) -> Outcome:
    """The run in ``run_dir`` locked, continued with what ``launch`` gives, and carried out."""
    store = locked(run_dir, launch.resume_options())
    try:
        return _resume(store, launch, progress, observers)
    finally:
        store.close()


def locked(run_dir: str | os.PathLike, resume: dict | None = None) -> DirectoryStore:
    """The run in ``run_dir``, locked against a second job working in it (``CheckpointError``
    naming the process that holds it, or saying there is no run). ``resume``: the job's options
    that a resume takes, for the commands its refusals print."""
    run_dir = ckpt.run_directory(run_dir)
    # after the arguments: only to keep start-up fast
    from tuner.store.run_dir import Lock, staging_path
    from tuner.store.store import DirectoryStore

    if not run_dir.is_dir():
        staging = staging_path(run_dir)
        if ckpt.is_directory(staging) and not staging.is_symlink():
            Lock(staging, named=run_dir).release()  # refused, naming the process, if one runs
        raise CheckpointError(f"{run_dir}: no such run directory")
    return DirectoryStore.existing(run_dir, resume)


def checkpointed(run_dir: Path) -> tuple[dict, RunState, RunConfig]:
    """A run's stored config, its checkpoint, and the config the run goes on with."""
    stored = ckpt.read_stored_config(run_dir)
    state = ckpt.load_state(run_dir, stored)
    return stored, state, parse_config(stored, str(run_dir / ckpt.CONFIG_FILE), run_dir,
                                       run_dir=run_dir)


def edited_config(path: str | os.PathLike, stored: dict, run_dir: Path) -> RunConfig:
    """The config file ``path`` given to continue the run in ``run_dir`` (whose stored config
    is ``stored``): its paths relative to its folder, or, where it writes one as ``stored``
    does, the run's (a copy of ``config.yaml``, wherever it lies)."""
    return parse_config(_the_runs_paths(read_document(path), stored, run_dir), str(path),
                        Path(path).parent, run_dir=run_dir)


def _the_runs_paths(document: Any, stored: dict, run_dir: Path) -> Any:
    """``document`` with each path that it writes as the run's config does made absolute,
    leading where the run's leads."""
    from engine.families.registry import canonical_spec, is_file_spec  # numpy code (start-up)

    if not isinstance(document, dict):
        return document
    document = dict(document)
    engine, ours = document.get("engine"), stored.get("engine")
    if isinstance(engine, dict) and isinstance(ours, dict) and isinstance(ours.get("cwd"), str) \
            and engine.get("cwd") == ours["cwd"]:
        document["engine"] = {**engine,
                              "cwd": os.path.normpath(run_dir.absolute() / ours["cwd"])}
    family = document.get("family")
    if isinstance(family, str) and family == stored.get("family") and is_file_spec(family):
        document["family"] = canonical_spec(family, run_dir)
    return document


def _resume(store: DirectoryStore, launch: Launch, progress: bool,
            observers: Sequence[Observer]) -> Outcome:
    run_dir = store.directory
    stored, state, config = checkpointed(run_dir)
    if launch.config:
        edited = edited_config(launch.config, stored, run_dir)
        wanted = edited.resolved()
        refused = [k for k in changed_keys(stored, wanted) if k not in RESUMABLE_CHANGES]
        if refused:
            ours, theirs = _places(config), _places(edited)
            changes = ", ".join(
                f"{k} (the run's {_shown(ours.get(k, value_at(stored, k)))}, here "
                f"{_shown(theirs.get(k, value_at(wanted, k)))})" for k in refused)
            paths = (f" (a path in {launch.config} is relative to its folder, or written as "
                     f"{run_dir / ckpt.CONFIG_FILE} writes it)"
                     if set(refused) & (set(ours) | set(theirs)) else "")
            raise ConfigError(
                f"{launch.config}: cannot resume {run_dir} with a changed {changes}{paths}: only "
                f"stop conditions and Ray settings may change ({', '.join(RESUMABLE_CHANGES)}); "
                f"resume it with its own settings: "
                f"{dataclasses.replace(launch, config=None).resume_command(run_dir)}")
        config = edited
    config = launch.apply(config)
    checkpoint = _identity(run_dir / ckpt.CHECKPOINT_FILE)
    try:
        return _continue(config, store, state, launch, progress, observers)
    finally:
        # TuningRun.resume stores a changed config (an edited stop condition, --workers,
        # --address) at once, but the checkpoint keeps the old one until the next generation
        # completes: a resume that ends before that (Ray not reached, Ctrl-C, a finished run)
        # puts the stored config back, or the run could not be resumed again ("checkpoint
        # belongs to another run").
        if _identity(run_dir / ckpt.CHECKPOINT_FILE) == checkpoint:
            _put_back(run_dir, stored)


def _shown(value) -> str:
    return "not set" if value is None else echo(value, 200)  # a path's end tells it apart


def _places(config: RunConfig) -> dict[str, str]:
    """Where a config's paths lead, by key path (absolute): what a refused change shows."""
    from engine.families.registry import is_file_spec  # numpy code (start-up)

    if config.engine is not None:
        return {"engine.cwd": config.engine.engine.cwd}
    return {"family": config.family} if is_file_spec(config.family) else {}


def _continue(config: RunConfig, store: DirectoryStore, state: RunState, launch: Launch,
              progress: bool, observers: Sequence[Observer]) -> Outcome:
    from tuner.loop.run import CMA_STOP_PREFIX, TuningRun  # the engine and pycma, once known good

    run_dir = store.directory
    run = TuningRun.resume(config, store, state, progress=progress,
                           family_changed=launch.family_changed, resume=launch.resume_options())
    if state.finished and state.cma_stop:
        criteria = state.cma_stop.removeprefix(CMA_STOP_PREFIX)
        return _finished(run_dir, state, f"the run has finished: pycma's own stop criteria "
                                         f"ended it ({criteria}), so it cannot be continued; "
                                         f"{_best_weights(run_dir)}")
    if state.finished and run.stop_reason() is not None:
        copy = shlex.join(["cp", str(run_dir / ckpt.CONFIG_FILE), "edited.yaml"])
        edited = dataclasses.replace(launch, config="edited.yaml").resume_command(run_dir)
        return _finished(run_dir, state, f"the run has finished ({state.stop_reason}); to "
                                         f"continue it: {copy}, raise cmaes.max_generations or "
                                         f"cmaes.max_games in edited.yaml, and run: {edited}")
    return carry_out(run, launch, observers)


def _finished(run_dir: Path, state: RunState, why: str) -> Outcome:
    """The outcome of resuming a run that has finished: nothing was done, the message says why
    (``tune resume`` prints it)."""
    return Outcome(FINISHED, 0, run_dir, state.generation, f"{run_dir}: {why}")


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
