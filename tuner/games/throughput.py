"""Two honest throughput figures for a run's machines.

- The *share*: the CPU-seconds of a generation's training games over the CPU-seconds its CPUs
  were present (``cluster.csv``): the CPUs counted over its wall time as nodes join and leave
  (``CpuTime``), so a node gone mid-generation cannot lift it above 100%. It counts a game's
  wall time, and a game on a loaded machine (every core busy, memory bandwidth and caches
  shared) takes longer than on an idle one: a full share is not a full CPU's worth of work.
- The *idle cores*: the positions the generation's searches evaluated per second of its wall
  time, over the positions per second one idle core evaluates at the same settings, measured
  on the driver's machine before the games start (``calibrate``). "16 CPUs did 12.5 idle
  cores' work" is what to compare machines by. Positions are the engine's own count of work
  (``GameResult.moves_evaluated``), the same for a game on any machine.

The calibration plays one game of the run's start weights at its search settings from a fixed
seed, cut short after about ``CALIBRATION_SECONDS`` (an estimate from its first moves says
where): at depths up to 2 its whole game fits; at deeper ones its opening moves stand for the
whole game, and an opening's positions are evaluated faster (up to twice as fast, measured at
depth 2), so the idle cores may read low there, by up to half. A new run that times games to
price itself (``tuner.analysis.timing``) plays no calibration: those games give the same figure,
over whole games.

A figure timed on this machine is as fast as the machine was while it was timed: ``LoadWatch``
measures the other work the machine did meanwhile (``/proc/stat``'s CPU ticks, else the load
average), so that a price timed on a busy machine can say so.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, Self

from engine.stats import counted
from tuner.games.progress import said_if_slow

if TYPE_CHECKING:  # the engine (numba) loads where a calibration plays, not with the report
    from engine.external.player import EnginePlayer, EngineSolver
    from engine.solver import PlayerSpec, Solver

CALIBRATION_SECONDS = 0.5
CALIBRATION_SEED = 2048
PROBE_MOVES = 16  # the first moves, whose time sizes the game played
# Loading the engine's compiled code takes about a second; longer, numba is compiling it (tens of
# seconds, the first time after an install or an engine change): said, not silence.
COMPILING_AFTER_SECONDS = 3.0
COMPILING = ("compiling the engine for this heuristic: tens of seconds the first time, then "
             "loaded from numba's cache")
# Other work on at least this share of the machine's cores while a figure was timed: the machine
# was busy, and the figure may be slower than the same games on it idle.
BUSY_SHARE = 0.25
MIN_TICKS = 50  # /proc/stat's CPU ticks (1/100 s a core) a reading needs; fewer: the load average
LOAD_AVERAGE_SECONDS = 60.0  # the time constant of the 1-minute load average


def solver_for(player: PlayerSpec | EnginePlayer) -> Solver | EngineSolver:
    """``player``'s solver, built (numba compiling it, the first time) with a long wait said."""
    with said_if_slow(COMPILING, COMPILING_AFTER_SECONDS):
        return player.solver()


def calibrate(spec: PlayerSpec, seconds: float = CALIBRATION_SECONDS) -> float | None:
    """``spec``'s positions per second on this process's core; None when the game evaluated
    nothing measurable (it ended at once)."""
    solver = solver_for(spec)
    probe = solver.play(CALIBRATION_SEED, max_moves=PROBE_MOVES)
    per_move = probe.seconds / max(probe.moves, 1)
    limit = max(PROBE_MOVES, int(seconds / per_move)) if per_move > 0 else PROBE_MOVES
    game = solver.play(CALIBRATION_SEED, max_moves=limit)
    if game.seconds <= 0 or game.moves_evaluated <= 0:
        return None
    return game.moves_evaluated / game.seconds


def idle_cores(positions: float, wall_seconds: float, idle_rate: float | None) -> float | None:
    """The work of ``positions`` evaluated in ``wall_seconds``, in idle cores' worth (each
    evaluating ``idle_rate`` positions per second); None where either is unknown."""
    if not idle_rate or wall_seconds <= 0:
        return None
    return positions / wall_seconds / idle_rate


def positions_here(positions: float, game_seconds: float, seconds_here: float) -> float:
    """Of ``positions`` searched in ``game_seconds`` of games, those of the ``seconds_here`` of
    them played in this sitting, at the same speed: a resumed generation also counts the games
    kept from an earlier sitting, searched before its wall time began, so its work per second
    of that wall time must leave them out."""
    return positions * seconds_here / game_seconds if game_seconds > 0 else 0.0


def share(game_seconds: float, cpu_seconds: float) -> float:
    """The share of ``cpu_seconds`` of CPUs' time that games took."""
    return game_seconds / cpu_seconds if cpu_seconds > 0 else 0.0


class CpuTime:
    """The CPUs an evaluator counted, over time: told each count as it is taken, it answers the
    CPU-seconds present between two moments (``time.perf_counter`` readings), the share's
    denominator. The count is held from one reading to the next, and the first held before it
    too, so that CPUs that never change give their count x the seconds, exactly."""

    def __init__(self, cpus: int, now: float):
        self.changes: list[tuple[float, int]] = [(now, cpus)]  # (since, cpus), oldest first

    @property
    def cpus(self) -> int:
        return self.changes[-1][1]

    def count(self, cpus: int, now: float) -> None:
        """The CPUs counted at ``now``: a node joined or left where they differ."""
        if cpus != self.cpus:
            self.changes.append((now, cpus))

    def between(self, start: float, end: float) -> float:
        """The CPU-seconds present from ``start`` to ``end``."""
        total = 0.0
        ends = [since for since, _cpus in self.changes[1:]] + [end]
        for i, ((since, cpus), until) in enumerate(zip(self.changes, ends)):
            low, high = (start if i == 0 else max(since, start)), min(until, end)
            if high > low:
                total += cpus * (high - low)
        return total


class LoadSample(NamedTuple):
    """What ``other_work`` compares: the machine's busy and total CPU ticks since it started
    (``/proc/stat``; None where it cannot be read), the CPU-seconds of this process and of its
    children that have ended (an external engine's, once closed), the wall clock, and the
    1-minute load average (None where the system keeps none)."""

    ticks: tuple[int, int] | None
    own: float
    wall: float
    load: float | None


def sample_load() -> LoadSample:
    children = os.times()
    own = time.process_time() + children.children_user + children.children_system
    return LoadSample(_stat_ticks(), own, time.perf_counter(), _load_average())


def _stat_ticks() -> tuple[int, int] | None:
    """All CPUs' busy and total ticks, from ``/proc/stat``'s first line (Linux): idle and
    waiting for a disk count as idle, the time a hypervisor gave to other machines as busy."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            name, *values = stat.readline().split()
        ticks = [int(v) for v in values[:8]]  # user nice system idle iowait irq softirq steal
    except (OSError, ValueError):
        return None
    if name != "cpu" or len(ticks) < 5:
        return None
    total = sum(ticks)
    return total - ticks[3] - ticks[4], total


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows, or a system that keeps none
        return None


@dataclass(frozen=True)
class OtherWork:
    """The work of other processes on this machine while something was timed: ``cores`` of its
    ``of`` cores' worth, measured ``how`` (``/proc/stat`` or the load average)."""

    cores: float
    of: int
    how: str

    @property
    def busy(self) -> bool:
        return self.cores >= BUSY_SHARE * self.of

    def describe(self) -> str:
        return f"other work kept {self.cores:.1f} of {counted(self.of, 'core')} busy, by {self.how}"


def other_work(before: LoadSample, after: LoadSample, cores: int | None = None
               ) -> OtherWork | None:
    """The other work between two samples taken around a timing, on a machine of ``cores``
    cores (None: ``os.cpu_count()``): its busy ticks less this process's own CPU time, where
    ``/proc/stat`` counted enough ticks between them; else the load average less what the
    timing itself could have added to it; None where neither is known."""
    cores = cores or os.cpu_count() or 1
    wall = after.wall - before.wall
    if before.ticks is not None and after.ticks is not None and wall > 0:
        busy, total = (a - b for a, b in zip(after.ticks, before.ticks))
        if total >= MIN_TICKS:
            own = (after.own - before.own) / wall
            return OtherWork(max(0.0, cores * busy / total - own), cores, "/proc/stat")
    if after.load is not None:  # one process timing adds up to 1 to the load, over a minute
        own = 1 - math.exp(-max(wall, 0.0) / LOAD_AVERAGE_SECONDS)
        return OtherWork(max(0.0, after.load - own), cores, "load average")
    return None


class LoadWatch:
    """The other work on this machine while a ``with`` block ran: ``other``, once it has
    ended (None where it could not be measured)."""

    def __init__(self):
        self.other: OtherWork | None = None
        self._before: LoadSample | None = None

    def __enter__(self) -> Self:
        self._before = sample_load()
        return self

    def __exit__(self, *exc) -> None:
        self.other = other_work(self._before, sample_load())
