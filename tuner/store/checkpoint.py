"""Run directories: everything a run needs to continue, written atomically after every generation.

A run directory holds:

- ``config.yaml``: the resolved config (every default filled in), written when the run starts.
- ``checkpoint.pkl``: the run state: CMA-ES (with its random state), generation counter, history,
  best candidates, counters. It is a pickle, so a run directory is trusted data: load only your own.
  Since format version 2 it starts with one line, ``tune2048-checkpoint 2 sha256=<hex>``, the
  SHA-256 of the pickle that follows: a damaged file is refused before it is unpickled, where a
  flipped bit could otherwise load as a silently different state. Version 1 (a bare pickle of
  ``{"format", "version": 1, "state"}``, no checksum) is still read, so older runs resume. Once
  unpickled, every field of the state is checked for its type and range (``check_state``), as
  the numbers of the CSV files are where they are read (``COLUMN_KINDS``).
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
import errno
import hashlib
import io
import math
import os
import pickle
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from engine.atomic import atomic_write
from engine.echo import echo, shorten
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
KEPT_GAMES_FILE = "games.jsonl"  # games since the last checkpoint: ``tuner.games.kept``
STOP_FILE = "stop"  # written by `tune stop`: the run stops after its current generation
MAX_COUNT = 2**63 - 1  # a machine integer: no count a run keeps goes beyond it
MAX_MAGNITUDE = 1e300  # of any other number a run keeps: far from a float's overflow in a sum
# What the numbers a run writes in its rows may be (history.csv, validation.csv, cluster.csv and
# the checkpoint's copies of them), by column: a count is a whole number from 0 to MAX_COUNT; a
# spread (a standard error, a half-width) a number from 0, inf where there is none (one game),
# nan where it is not known (a fitness told by tuner.api.AskTell without one); a size a number
# from 0; a value any number; none of them beyond MAX_MAGNITUDE. Other columns are the run's.
COUNT, SPREAD, SIZE, VALUE = "count", "spread", "size", "value"
COLUMN_KINDS = {
    **dict.fromkeys(("generation", "evaluations", "games", "cpus", "popsize", "restart",
                     "games_min", "games_max", "games_saved", "positions"), COUNT),
    **dict.fromkeys(("best_stderr", "fitness_stderr", "ci95", "validated_stderr",
                     "vs_start_stderr"), SPREAD),
    **dict.fromkeys(("sigma", "seconds", "game_seconds", "share", "cpu_seconds", "games_mean"),
                    SIZE),
    **dict.fromkeys(("best", "median", "worst", "fitness", "mean_score", "validated",
                     "vs_start"), VALUE),
}
EXPECTED = {COUNT: f"a whole number from 0 to {MAX_COUNT}",
            SPREAD: "a number from 0 to 1e300, inf or nan", SIZE: "a number from 0 to 1e300",
            VALUE: "a number from -1e300 to 1e300"}


def number_problem(kind: str, value: Any) -> str | None:
    """What a number of ``kind`` (``COLUMN_KINDS``) is expected to be, where ``value`` is not
    one; None where it is."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return EXPECTED[kind]
    if kind == COUNT:  # compared as it is: 2**70 is no float
        fine = 0 <= value <= MAX_COUNT and value == math.floor(value)
    elif kind == SPREAD:
        fine = 0 <= value <= MAX_MAGNITUDE or value == math.inf or (
            isinstance(value, float) and math.isnan(value))
    else:  # NaN is in no range
        fine = -MAX_MAGNITUDE <= value <= MAX_MAGNITUDE and (kind == VALUE or value >= 0)
    return None if fine else EXPECTED[kind]


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
    check_state(state, path)
    if stored is None:
        stored = read_stored_config(run_dir)
    # a resume writes what it may change (a stop condition, the Ray settings) into config.yaml
    # before its first checkpoint, and puts the old back if it ends before one: where it could
    # not (a full disk), the two differ in those keys only, and are still one run
    if any(key not in RESUMABLE_CHANGES for key in changed_keys(state.config, stored)):
        raise CheckpointError(
            f"{path}: checkpoint belongs to another run than {run_dir / CONFIG_FILE} "
            f"(run {state.config.get('run', {}).get('name')!r})"
        )
    return state


def check_state(state: RunState, path: Path) -> None:
    """Refuse a run state whose fields are not of the type and range a run gives them: a
    checksum says the file is whole, not that a tune2048 run wrote what it holds.
    ``CheckpointError`` names ``path`` and the field."""
    def fail(name: str, expected: str, value: Any) -> CheckpointError:
        return CheckpointError(f"{path}: damaged: {name}: expected {expected}, got "
                               f"{echo(value)}")

    missing = object()
    values = {f.name: getattr(state, f.name, missing) for f in fields(RunState)}
    for name, value in values.items():
        if value is missing:
            raise CheckpointError(f"{path}: damaged: {name}: missing")
    for name, kind in (("generation", COUNT), ("games", COUNT), ("evaluations", COUNT),
                       ("seconds", SIZE)):
        if (expected := number_problem(kind, values[name])) is not None:
            raise fail(name, expected, values[name])
    for name, wanted, what in (("config", dict, "a mapping"), ("strategy", bytes, "bytes"),
                               ("finished", bool, "true or false"),
                               ("stop_reason", str, "text"), ("cma_stop", str, "text")):
        if not isinstance(values[name], wanted):
            raise fail(name, what, values[name])
    if values["family_digest"] is not None and not isinstance(values["family_digest"], str):
        raise fail("family_digest", "text or none", values["family_digest"])
    for name, kinds in (("history", list), ("cluster", tuple | list)):
        rows = values[name]
        if not isinstance(rows, kinds):
            raise fail(name, "a list of rows", rows)
        for i, row in enumerate(rows):
            if not isinstance(row, dict) or not all(isinstance(key, str) for key in row):
                raise fail(f"{name}[{i}]", "a row of named values", row)
            for column, value in row.items():
                kind = COLUMN_KINDS.get(column)
                if kind is not None and (expected := number_problem(kind, value)) is not None:
                    raise fail(f"{name}[{i}].{column}", expected, value)
    if not isinstance(values["elites"], list):
        raise fail("elites", "a list of candidates", values["elites"])
    for i, elite in enumerate(values["elites"]):
        if (problem := _candidate_problem(elite)) is not None:
            raise CheckpointError(f"{path}: damaged: elites[{i}]{problem}")


def _candidate_problem(elite: Any) -> str | None:
    """What is wrong with a kept ``Candidate`` (``.field: expected ..., got ...``); None where
    nothing is."""
    if not isinstance(elite, Candidate):
        return f": expected a candidate, got {echo(elite)}"
    checks = (("fitness", VALUE), ("stderr", SPREAD), ("games", COUNT), ("generation", COUNT))
    for name, kind in checks:
        value = getattr(elite, name, None)
        if (expected := number_problem(kind, value)) is not None:
            return f".{name}: expected {expected}, got {echo(value)}"
    x, weights = getattr(elite, "x", None), getattr(elite, "weights", None)
    if not isinstance(x, list) or any(number_problem(VALUE, v) for v in x):
        return f".x: expected a list of finite numbers, got {echo(x)}"
    if not isinstance(weights, dict) or not all(
            isinstance(k, str) and number_problem(VALUE, v) is None for k, v in weights.items()):
        return f".weights: expected finite numbers by name, got {echo(weights)}"
    return None


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


def run_directory(path: str | os.PathLike) -> Path:
    """``path``, a run directory as a user named it, refused (``CheckpointError``) where no
    file system could hold its name (a folder name or the whole path too long): there is then
    no such run directory, where its first use would raise ``OSError``."""
    path = Path(path)
    try:
        os.stat(path)
    except OSError as err:
        if err.errno == errno.ENAMETOOLONG:
            raise CheckpointError(f"{shorten(str(path))}: no such run directory: "
                                  f"{_too_long(path)}") from None
    return path


def _too_long(path: Path) -> str:
    """What about ``path`` is longer than a file system holds."""
    longest = max(len(os.fsencode(part)) for part in path.parts)
    if longest > 255:  # NAME_MAX of Linux's file systems
        return f"a name of {longest:,} bytes, longer than a file system holds (255)"
    return f"a path of {len(os.fsencode(str(path))):,} bytes, longer than a file system holds"


def is_directory(path: Path) -> bool:
    """``path.is_dir()``, False where no file system could hold its name (a staging directory's
    is 5 bytes longer than its run directory's)."""
    try:
        return path.is_dir()
    except OSError as err:
        if err.errno != errno.ENAMETOOLONG:
            raise
        return False


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
