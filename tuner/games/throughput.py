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
depth 2), so the idle cores may read low there, by up to half.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the engine (numba) loads where a calibration plays, not with the report
    from engine.solver import PlayerSpec

CALIBRATION_SECONDS = 0.5
CALIBRATION_SEED = 2048
PROBE_MOVES = 16  # the first moves, whose time sizes the game played


def calibrate(spec: PlayerSpec, seconds: float = CALIBRATION_SECONDS) -> float | None:
    """``spec``'s positions per second on this process's core; None when the game evaluated
    nothing measurable (it ended at once)."""
    solver = spec.solver()
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
