"""Two honest throughput figures for a run's machines.

- The *share*: the CPU-seconds of a generation's training games over its CPUs x its wall time
  (``cluster.csv``). It counts a game's wall time, and a game on a loaded machine (every core
  busy, memory bandwidth and caches shared) takes longer than on an idle one: a full share is
  not a full CPU's worth of work.
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


def share(game_seconds: float, cpus: float, wall_seconds: float) -> float:
    """The share of ``cpus`` CPUs' time over ``wall_seconds`` that games took."""
    capacity = cpus * wall_seconds
    return game_seconds / capacity if capacity > 0 else 0.0
