"""What ``tune status`` (and ``tune report`` on a live run) says of a run's ``status.json``:
alive, dead, not heard from, or ended, and where it stands, in a few lines.

Whether the process is alive is checked where it can be: on the host that runs it, the process
id must exist and have the start time the file records (an id is reused once its process has
gone). From another host only the file's age can be read: a run is said to be running while it
was heard from within ``overdue_after`` of a generation's time, and not heard from after.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from engine.stats import Z95, clock, counted, readable
from tuner import commands
from tuner.config.limits import LOCAL
from tuner.store import checkpoint as ckpt
from tuner.store.status_file import (
    RUNNING,
    RunStatus,
    process_exists,
    process_start,
    this_host,
)


class Verdict(enum.Enum):
    """What a run is, and ``tune status``'s exit status for it."""

    RUNNING = 0  # alive (checked on its host), or heard from recently (another host)
    ENDED = 3  # the job said it ended: done, stopped, interrupted or failed
    DEAD = 4  # gone without a final word (its host), or not heard from for too long

    @property
    def exit_code(self) -> int:
        return self.value


@dataclass(frozen=True)
class Host:
    """This host, as the verdict sees it: its name, and its processes (a test's own)."""

    name: str = field(default_factory=this_host)
    exists: Callable[[int], bool] = process_exists
    started: Callable[[int], int | None] = process_start


def overdue_after(status: RunStatus) -> float | None:
    """The silence, in seconds, after which a run on another host is said not heard from: two
    generations' time and two minutes (a status is written at least each generation); None
    before a generation has completed (the first one's time is not known)."""
    if status.generation_seconds is None:
        return None
    return 2 * status.generation_seconds + 120


def judge(status: RunStatus, now: float, host: Host | None = None) -> tuple[Verdict, str]:
    """The verdict on ``status`` at ``now`` (seconds since the epoch), and its first words."""
    host = host or Host()
    heard = f"last heard {ago(now - status.updated)} ago"
    if status.state != RUNNING:
        return Verdict.ENDED, status.state
    where = f"pid {status.pid} on {status.host}"
    if status.host == host.name:
        alive = host.exists(status.pid)
        if alive and status.process_start is not None:  # else the id alone (no /proc)
            started = host.started(status.pid)
            alive = started in (None, status.process_start)  # else another process took the id
        if alive:
            return Verdict.RUNNING, f"running ({where}, alive; {heard})"
        return Verdict.DEAD, (f"dead: {where} is gone without saying it ended (killed, or the "
                              f"machine restarted); {heard}")
    limit = overdue_after(status)
    if limit is not None and now - status.updated > limit:
        return Verdict.DEAD, (f"not heard from: {where}, {heard}, while a generation takes "
                              f"about {clock(status.generation_seconds)}: it may have died "
                              f"(tune status on {status.host} tells)")
    return Verdict.RUNNING, f"running ({where}, another host: {heard})"


def status_lines(status: RunStatus, path: Path, run_dir: Path, now: float,
                 host: Host | None = None) -> tuple[Verdict, list[str]]:
    """``tune status``'s lines for the run at ``run_dir`` (as the user named it) whose status
    is ``status``, read from ``path``, and the verdict."""
    verdict, words = judge(status, now, host)
    lines = [f"{run_dir}: {words}", f"  {progress(status)}"]
    if figures := machines(status, now, eta=verdict is Verdict.RUNNING):
        lines.append(f"  {figures}")
    lines.append(f"  last event: {status.event} ({ago(now - status.updated)} ago)")
    staged = path.parent.resolve() != run_dir.resolve()
    if verdict is Verdict.RUNNING and (asked := stop_requested(path.parent)) is not None:
        lines.append(f"  stop requested {ago(now - asked)} ago (tune stop): it stops once its "
                     "current generation is checkpointed")
    if verdict is Verdict.DEAD or status.state in ("stopped", "interrupted", "failed"):
        if staged:
            lines.append("  nothing to resume: it had no checkpoint yet; start it again with "
                         "tune run and its config")
        else:
            lines += [f"  {line}" for line in resume_lines(status, run_dir, verdict)]
    elif status.state == "done":
        lines.append(f"  see: {commands.tune('report', run_dir)}")
    return verdict, lines


def resume_lines(status: RunStatus, run_dir: Path, verdict: Verdict) -> list[str]:
    """The command that resumes the run, with the options its job was given (as the job says
    it), and for a run on a cluster that failed or died, the one that goes on on this machine
    (its results do not depend on where it plays)."""
    options = status.resume or {}
    lines = [f"resume with: {commands.resume(run_dir, **options)}"]
    cluster = options.get("address") not in (None, LOCAL)
    if cluster and (verdict is Verdict.DEAD or status.state == "failed"):
        here = commands.resume(run_dir, **{**options, "address": LOCAL})
        lines.append(f"or on this machine: {here}")
    return lines


def stop_requested(directory: Path) -> float | None:
    """When ``tune stop`` asked the job working in ``directory`` to stop (seconds since the
    epoch), if it has not yet."""
    try:
        return (directory / ckpt.STOP_FILE).stat().st_mtime
    except OSError:
        return None


def progress(status: RunStatus) -> str:
    """Generation, games and best so far."""
    of = f" of {status.max_generations:,}" if status.max_generations is not None else ""
    text = (f"{status.generation:,}{of} generations done, "
            f"{counted(status.games, 'training game')}")
    if status.best_fitness is not None:
        stderr = status.best_stderr or 0.0
        text += (f"; best training fitness {readable(status.best_fitness)} +/- "
                 f"{readable(Z95 * stderr)} (95% CI, generation {status.best_generation:,})")
    return text


def machines(status: RunStatus, now: float, eta: bool) -> str:
    """The last generation's CPUs and throughput figures, a generation's time and, if ``eta``,
    the time left (from now)."""
    parts = []
    if status.cpus is not None and status.share is not None:
        parts.append(f"{counted(status.cpus, 'CPU')}, {status.share:.0%} of their time on "
                     "games")
    if status.idle_cores is not None:
        parts.append(f"the work of {status.idle_cores:.1f} idle cores")
    if status.generation_seconds is not None:
        parts.append(f"a generation takes {clock(status.generation_seconds)}")
    if eta and status.eta_seconds is not None:
        parts.append(f"ETA {clock(max(status.eta_seconds - (now - status.updated), 0))}")
    return ", ".join(parts)


def ago(seconds: float) -> str:
    """A time since, as people say it: 40 s, 12 min, 3 h 05 min."""
    seconds = max(round(seconds), 0)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
