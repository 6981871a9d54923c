"""``status.json``: where the job running a run stands, for ``tune status`` from any shell.

The job rewrites it (atomically) as it starts, after every generation, now and then while a
generation's games are played, and as it ends. It says which process works the run (its id, host
and start time, so that a reader on the same host can tell that very process from a later one
that got its id), the run's state, and the figures a person watching wants. Its times are wall
clock (seconds since the epoch): the file is apart from what a run computes, and never read by
it.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import typing
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from engine.echo import shorten
from tuner.cluster import processes
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import staging_path

STATUS_FORMAT = 1
RUNNING = "running"
ENDED = ("stopped", "interrupted", "failed", "done")  # a final state: the job said it ended
STATES = (RUNNING, *ENDED)


@dataclass(frozen=True)
class RunStatus:
    """One ``status.json``. ``process_start``: the process's start time in clock ticks since
    boot (``/proc/PID/stat``), None where the system does not say. ``share``: the last
    generation's share of the CPUs' time on training games; ``idle_cores``: the work its games
    did in idle cores' worth (``tuner.games.throughput``), None without a calibration.
    ``resume``: the options the job was given that a resume takes (``tuner.commands.resume``'s
    keywords), so that ``tune status`` and ``tune stop`` print the job's own resume command;
    None in a file written before 0.4."""

    run: str
    state: str
    pid: int
    host: str
    process_start: int | None
    generation: int
    max_generations: int | None
    games: int
    best_fitness: float | None
    best_stderr: float | None
    best_generation: int | None
    fitness: str
    cpus: int | None
    share: float | None
    idle_cores: float | None
    idle_rate: float | None  # positions per second on one idle core of ``host``
    generation_seconds: float | None  # mean wall time of a generation so far
    eta_seconds: float | None  # at ``updated``
    event: str
    started: float
    updated: float
    resume: dict | None = None


def status_text(status: RunStatus) -> str:
    """The file's text: JSON, one key a line, so that a person can read it too."""
    return json.dumps({"format": STATUS_FORMAT, **asdict(status)}, indent=1) + "\n"


def _field_types() -> dict[str, tuple[type, bool]]:
    """Each field of ``RunStatus``: its type, and whether it may be None (``T | None``)."""
    found = {}
    for name, hint in typing.get_type_hints(RunStatus).items():
        kinds = typing.get_args(hint) or (hint,)
        found[name] = (next(k for k in kinds if k is not type(None)), type(None) in kinds)
    return found


_FIELD_TYPES = _field_types()
MAX_PID = 2**31 - 1  # a pid_t; os.kill refuses more
# The range of each number (``tuner.store.checkpoint.number_problem``); a pid's is also its own.
_FIELD_KINDS = {
    **dict.fromkeys(("pid", "process_start", "generation", "max_generations", "games",
                     "best_generation", "cpus"), ckpt.COUNT),
    "best_fitness": ckpt.VALUE, "best_stderr": ckpt.SPREAD,
    **dict.fromkeys(("share", "idle_cores", "idle_rate", "generation_seconds", "eta_seconds",
                     "started", "updated"), ckpt.SIZE),
}


def parse_status(text: str, path: Path) -> RunStatus:
    """A status file's text, checked; ``CheckpointError`` naming ``path`` and what is wrong."""
    try:
        raw = json.loads(text)
    except ValueError as err:
        raise CheckpointError(f"{path}: damaged: not JSON ({shorten(str(err))})") from None
    if not isinstance(raw, dict) or raw.get("format") != STATUS_FORMAT:
        raise CheckpointError(f"{path}: damaged: not a tune2048 status file (format "
                              f"{STATUS_FORMAT})")
    values = {}
    for field in fields(RunStatus):
        value = raw.get(field.name)
        wanted, optional = _FIELD_TYPES[field.name]
        if value is None and optional:
            values[field.name] = None
            continue
        kind = _FIELD_KINDS.get(field.name)
        if kind is not None:  # a number: a float field takes an int, an int field no float
            expected = ckpt.number_problem(kind, value)
            fine = expected is None and (wanted is float or isinstance(value, int))
        else:
            expected, fine = wanted.__name__, isinstance(value, wanted)
        if not fine:
            raise CheckpointError(f"{path}: damaged: {field.name}: expected "
                                  f"{expected or 'an integer'}, got {shorten(repr(value))}")
        values[field.name] = float(value) if wanted is float else value
    if not 0 < values["pid"] <= MAX_PID:  # os.kill(0 or less) would name process groups
        raise CheckpointError(f"{path}: damaged: pid: expected a process id, got "
                              f"{shorten(str(values['pid']))}")
    if values["resume"] is not None:
        _check_resume(values["resume"], path)
    if values["state"] not in STATES:
        raise CheckpointError(f"{path}: damaged: state: expected one of {', '.join(STATES)}, "
                              f"got {shorten(repr(values['state']))}")
    return RunStatus(**values)


# The resume options a status file keeps (``tuner.commands.resume``'s keywords): what each holds.
RESUME_OPTIONS = {"config": "a path or null", "family_changed": "true or false",
                  "workers": "a count or null", "address": "an address or null"}


def _check_resume(options: dict, path: Path) -> None:
    """``CheckpointError`` unless ``options`` are resume options that hold what they take."""
    for name, value in options.items():
        if name not in RESUME_OPTIONS:
            raise CheckpointError(f"{path}: damaged: resume: unknown option "
                                  f"{shorten(repr(name))}")
        if name == "family_changed":
            fine = isinstance(value, bool)
        elif name == "workers":
            fine = value is None or (isinstance(value, int)
                                     and ckpt.number_problem(ckpt.COUNT, value) is None)
        else:
            fine = value is None or isinstance(value, str)
        if not fine:
            raise CheckpointError(f"{path}: damaged: resume: {name}: expected "
                                  f"{RESUME_OPTIONS[name]}, got {shorten(repr(value))}")


def read_status(run_dir: Path) -> tuple[RunStatus, Path] | None:
    """The newest status of the run at ``run_dir``, and its file: the run directory's, or its
    staging directory's while a new run has no checkpoint yet (``tuner.store.run_dir``). None
    where neither has one (a run from before status files, or a shipped result)."""
    found = []
    staging = staging_path(Path(os.path.abspath(run_dir)))
    for directory in (run_dir, staging):
        path = directory / ckpt.STATUS_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            continue
        except OSError as err:
            if directory == staging and err.errno == errno.ENAMETOOLONG:  # none can be there
                continue
            raise CheckpointError(f"{path}: cannot read: {err.strerror}") from None
        except UnicodeDecodeError:
            raise CheckpointError(f"{path}: cannot read: not UTF-8 text") from None
        found.append((parse_status(text, path), path))
    return max(found, key=lambda pair: pair[0].updated, default=None)


def this_host() -> str:
    return socket.gethostname()


def process_start(pid: int) -> int | None:
    """When process ``pid`` started, in clock ticks since boot; None where it does not exist
    or the system does not say (no ``/proc``)."""
    start = processes.start_time(pid)
    return int(start) if start is not None and start.isdigit() else None


def process_exists(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
