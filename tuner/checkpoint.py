"""Run directories: everything a run needs to continue, written atomically after every generation.

A run directory holds:

- ``config.yaml``: the resolved config (every default filled in), written when the run starts.
- ``checkpoint.pkl``: the run state: CMA-ES (with its random state), generation counter, history,
  best candidates, counters. It is a pickle, so a run directory is trusted data: load only your own.
- ``history.csv``: one row per completed generation (a view of the checkpoint's history).
- ``best.yaml``: the best weights so far (training fitness), replaced by the validated winner.
- ``validation.csv``: the final validation of the best candidates, once the run has finished.
- ``run.log``: the log lines.

Every file that matters is written to a temporary file and renamed, so a killed run leaves either
the old or the new version of each, never a torn one.
"""

from __future__ import annotations

import csv
import io
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine import yaml_text
from engine.atomic import atomic_write
from tuner.errors import CheckpointError

CHECKPOINT_FORMAT = "tune2048-checkpoint"
CHECKPOINT_VERSION = 1
CONFIG_FILE = "config.yaml"
CHECKPOINT_FILE = "checkpoint.pkl"
HISTORY_FILE = "history.csv"
BEST_FILE = "best.yaml"
VALIDATION_FILE = "validation.csv"
LOG_FILE = "run.log"


@dataclass
class Candidate:
    """A weight vector that was evaluated, with its training fitness."""

    x: list[float]
    weights: dict[str, float]
    fitness: float
    stderr: float
    games: int
    generation: int


@dataclass
class RunState:
    """The whole state of a run: resuming from it replays exactly what would have happened."""

    config: dict[str, Any]
    generation: int = 0
    strategy: bytes = b""
    history: list[dict[str, Any]] = field(default_factory=list)
    elites: list[Candidate] = field(default_factory=list)
    games: int = 0
    evaluations: int = 0
    seconds: float = 0.0
    finished: bool = False
    stop_reason: str = ""  # why the last stretch of the run stopped
    cma_stop: str = ""  # pycma's termination criteria, once they have ended the search


def save_state(run_dir: Path, state: RunState) -> None:
    """Write the history view, then the checkpoint (the checkpoint is the source of truth)."""
    atomic_write(run_dir / HISTORY_FILE, rows_csv(state.history))
    payload = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION, "state": state}
    atomic_write(run_dir / CHECKPOINT_FILE, pickle.dumps(payload))


def rows_csv(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return ""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_config(run_dir: Path, resolved: dict[str, Any]) -> None:
    atomic_write(run_dir / CONFIG_FILE, yaml.safe_dump(resolved, sort_keys=False))


def read_stored_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / CONFIG_FILE
    try:
        document = yaml_text.load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path}: missing: {run_dir} is not a tune2048 run directory") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise CheckpointError(f"{path}: unreadable run config ({type(err).__name__})") from None
    if not isinstance(document, dict):
        raise CheckpointError(f"{path}: not a run config")
    return document


def load_state(run_dir: Path) -> RunState:
    """Load a run's checkpoint; CheckpointError names the file and what is wrong with it."""
    path = run_dir / CHECKPOINT_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(
            f"{path}: missing: the run has no completed generation to resume from"
        ) from None
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read: {err.strerror}") from None
    try:
        payload = pickle.loads(raw)
    except Exception:  # noqa: BLE001 - a torn or foreign pickle can raise almost anything
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a tune2048 checkpoint")
    if payload.get("version") != CHECKPOINT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format version {payload.get('version')!r}; "
            f"this tune2048 reads version {CHECKPOINT_VERSION}"
        )
    state = payload.get("state")
    if not isinstance(state, RunState):
        raise CheckpointError(f"{path}: checkpoint holds no run state")
    stored = read_stored_config(run_dir)
    if state.config != stored:
        raise CheckpointError(
            f"{path}: checkpoint belongs to another run than {run_dir / CONFIG_FILE} "
            f"(run {state.config.get('run', {}).get('name')!r})"
        )
    return state


def check_writable(directory: Path) -> None:
    """Fail before any compute if the run directory cannot be created or written."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CheckpointError(f"{directory}: cannot create run directory: {err.strerror}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CheckpointError(f"{directory}: run directory is not writable")
