"""Run directories: everything a run needs to continue, written atomically after every generation.

A run directory holds:

- ``config.yaml``: the resolved config (every default filled in), written when the run starts.
- ``checkpoint.pkl``: the run state: CMA-ES (with its random state), generation counter, history,
  best candidates, counters. It is a pickle, so a run directory is trusted data: load only your own.
  Since format version 2 it starts with one line, ``tune2048-checkpoint 2 sha256=<hex>``, the
  SHA-256 of the pickle that follows: a damaged file is refused before it is unpickled, where a
  flipped bit could otherwise load as a silently different state. Version 1 (a bare pickle of
  ``{"format", "version": 1, "state"}``, no checksum) is still read, so older runs resume.
- ``history.csv``: one row per completed generation (a view of the checkpoint's history): a pure
  function of the config and its seed, the same on any cluster.
- ``cluster.csv``: per completed generation, what the machines did: the CPUs available at its
  end, the seconds it took, the CPU-seconds of its training games, their share of the CPUs'
  time, and that time (``cpu_seconds``: the CPU-seconds its CPUs were present, since 0.4).
  These depend on the cluster, so they are kept apart from the history.
- ``best.yaml``: the best weights so far (training fitness), replaced by the validated winner.
- ``validation.csv``: the final validation of the best candidates, once the run has finished.
- ``run.log``: the log lines.
- ``status.json``: where the job running it stands (process, host, generation, games, best so
  far, ETA, last event), rewritten each generation and as the job ends; what ``tune status``
  reads (``tuner.store.status_file``). It holds wall-clock values, so no result depends on it.
- ``stop``: while a run works, ``tune stop`` writes it to ask the run to stop once its current
  generation is checkpointed; the run removes it.

Every file that matters is written to a temporary file and renamed, so a killed run leaves either
the old or the new version of each, never a torn one.
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import pickle
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.atomic import atomic_write
from tuner import pickles
from tuner.config import RESUMABLE_CHANGES, changed_keys, read_document, stored_text
from tuner.errors import CheckpointError, ConfigError

CHECKPOINT_FORMAT = "tune2048-checkpoint"
CHECKPOINT_VERSION = 2  # what save_state writes
LEGACY_VERSION = 1  # a bare pickle, no checksum: still read
# A header names the version first, so a newer file is named as such; then the version 2 header.
_VERSION = re.compile(rf"{CHECKPOINT_FORMAT} ([0-9]{{1,9}}) ".encode())
_HEADER = re.compile(rf"{CHECKPOINT_FORMAT} {CHECKPOINT_VERSION} sha256=([0-9a-f]{{64}})\n".encode())
_PICKLE_START = b"\x80"  # the PROTO opcode that starts every pickle of protocol 2 or later
CONFIG_FILE = "config.yaml"
CHECKPOINT_FILE = "checkpoint.pkl"
HISTORY_FILE = "history.csv"
CLUSTER_FILE = "cluster.csv"
BEST_FILE = "best.yaml"
VALIDATION_FILE = "validation.csv"
LOG_FILE = "run.log"
STATUS_FILE = "status.json"  # where the job running it stands: ``tune status``
STOP_FILE = "stop"  # written by `tune stop`: the run stops after its current generation


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
    # sha256 of a file or module family's source when the run started (None: built-in code, or
    # a run from before it was recorded): a resume notices an edited family
    family_digest: str | None = None
    # per generation: CPUs, seconds, game seconds, share, CPU-seconds (``cluster.csv``); a
    # tuple, so that checkpoints written before it existed load with none
    cluster: tuple[dict[str, Any], ...] = ()


def save_state(run_dir: Path, state: RunState) -> None:
    """Write the history and cluster views, then the checkpoint (the checkpoint is the source
    of truth)."""
    atomic_write(run_dir / HISTORY_FILE, rows_csv(state.history))
    if state.cluster:
        atomic_write(run_dir / CLUSTER_FILE, rows_csv(list(state.cluster)))
    atomic_write(run_dir / CHECKPOINT_FILE, encode_state(state))


def encode_state(state: RunState) -> bytes:
    """The checkpoint file's bytes: the header line with the payload's SHA-256, then the payload."""
    payload = pickle.dumps(state)
    digest = hashlib.sha256(payload).hexdigest()
    return f"{CHECKPOINT_FORMAT} {CHECKPOINT_VERSION} sha256={digest}\n".encode() + payload


def rows_csv(rows: list[dict[str, Any]]) -> str:
    """Rows as CSV, with every column any row has (a run resumed by a newer tune2048 has rows
    with more columns than its first ones: their cells are left empty there)."""
    if not rows:
        return ""
    out = io.StringIO()
    columns = list(dict.fromkeys(key for row in rows for key in row))
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def write_config(run_dir: Path, resolved: dict[str, Any]) -> None:
    atomic_write(run_dir / CONFIG_FILE, stored_text(resolved))


def read_stored_config(run_dir: Path) -> dict[str, Any]:
    """The run's resolved config as stored, read as every config is (``read_document``)."""
    path = run_dir / CONFIG_FILE
    if not path.is_file():
        raise CheckpointError(f"{path}: missing: {run_dir} is not a tune2048 run directory")
    try:
        document = read_document(path)
    except ConfigError as err:
        problem = str(err).removeprefix(f"{path}: ")
        raise CheckpointError(f"{path}: unreadable run config ({problem})") from None
    if not isinstance(document, dict):
        raise CheckpointError(f"{path}: not a run config")
    return document


def load_state(run_dir: Path, stored: dict[str, Any] | None = None) -> RunState:
    """Load a run's checkpoint, which must belong to the run's stored config (``stored``, if
    the caller has read it already); CheckpointError names the file and what is wrong."""
    path = run_dir / CHECKPOINT_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise CheckpointError(
            f"{path}: missing: the run has no completed generation to resume from"
        ) from None
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read: {err.strerror}") from None
    state = decode_state(raw, path)
    if not isinstance(state, RunState):
        raise CheckpointError(f"{path}: checkpoint holds no run state")
    if stored is None:
        stored = read_stored_config(run_dir)
    # a resume writes what it may change (a stop condition, the Ray settings) into config.yaml
    # before its first checkpoint, and puts the old back if it ends before one: where it could
    # not (a full disk), the two differ in those keys only, and are still one run
    if not isinstance(state.config, dict) or any(
            key not in RESUMABLE_CHANGES for key in changed_keys(state.config, stored)):
        raise CheckpointError(
            f"{path}: checkpoint belongs to another run than {run_dir / CONFIG_FILE} "
            f"(run {state.config.get('run', {}).get('name')!r})"
        )
    return state


def decode_state(raw: bytes, path: Path) -> Any:
    """What a checkpoint file holds, once its header and checksum (or its version 1 layout) are
    checked; ``path`` names the file in errors."""
    if raw.startswith(_PICKLE_START):
        payload = _unpickle(raw, path)
        if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
            raise CheckpointError(f"{path}: not a tune2048 checkpoint")
        if payload.get("version") != LEGACY_VERSION:
            raise _unsupported(path, payload.get("version"))
        return payload.get("state")
    version = _VERSION.match(raw)
    if version is None:
        raise CheckpointError(f"{path}: not a tune2048 checkpoint")
    if int(version[1]) != CHECKPOINT_VERSION:
        raise _unsupported(path, int(version[1]))
    header = _HEADER.match(raw)
    if header is None:
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint (damaged header line)")
    payload = raw[header.end():]
    if hashlib.sha256(payload).hexdigest() != header[1].decode():
        raise CheckpointError(
            f"{path}: truncated or corrupt checkpoint (checksum mismatch): the file changed "
            "after it was written; resume from a copy or start the run again"
        )
    return _unpickle(payload, path)


def _unpickle(data: bytes, path: Path) -> Any:
    try:
        return pickles.loads(data)
    except Exception:  # noqa: BLE001 - a torn or foreign pickle can raise almost anything
        raise CheckpointError(f"{path}: truncated or corrupt checkpoint") from None


def _unsupported(path: Path, version: Any) -> CheckpointError:
    return CheckpointError(
        f"{path}: checkpoint format version {version!r}; this tune2048 reads versions "
        f"{LEGACY_VERSION} and {CHECKPOINT_VERSION}"
    )


def check_writable(directory: Path, staged_for: Path | None = None) -> None:
    """Fail before any compute if the run directory cannot be created or written.
    ``staged_for``: the run directory that ``directory`` stages until the first checkpoint;
    messages name it, as it is what the user asked for."""
    named = staged_for or directory
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CheckpointError(f"{named}: cannot create run directory: {err.strerror}") from None
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CheckpointError(f"{directory}: run directory is not writable" if staged_for is None
                              else f"{named.parent}: not writable, so {named} cannot be created")
