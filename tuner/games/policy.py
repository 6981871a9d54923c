"""How a driver plays what schedules hand out: the policy a config's ``ray`` section gives (games
per unit, dispatch), the game times it measures as units finish, the size of the next unit,
and the population ``cmaes.popsize: auto`` gives a cluster. None of it changes which games
count, only when they are played (``tuner.games.schedule``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.depth import DepthPolicy, rough_depth

if TYPE_CHECKING:
    from engine.solver import GameResult

DISPATCHES = ("pipelined", "barrier")


@dataclass(frozen=True)
class SchedulePolicy:
    """How a driver plays what schedules hand out: ``games_per_task`` games a unit (``auto``:
    sized by ``UnitSize``) and the ``dispatch`` (``pipelined`` gives idle CPUs speculative units,
    ``barrier`` never does). Neither changes a result, only when games are played."""

    games_per_task: int | str = "auto"
    dispatch: str = "pipelined"

    def __post_init__(self) -> None:
        if self.dispatch not in DISPATCHES:
            raise ValueError(f"dispatch {self.dispatch!r}: expected one of "
                             f"{', '.join(DISPATCHES)}")

    @classmethod
    def of(cls, policy: SchedulePolicy | int | str) -> SchedulePolicy:
        """``policy`` itself, or a policy of that many games per unit (``auto``), pipelined."""
        return policy if isinstance(policy, SchedulePolicy) else cls(policy)

    @property
    def speculates(self) -> bool:
        return self.dispatch == "pipelined"


class GameTimes:
    """The seconds per game a driver has measured so far (what sizes ``auto`` units); only the
    driver adds to it, as units finish."""

    def __init__(self):
        self.games = 0
        self.seconds = 0.0

    def add(self, results: Sequence[GameResult]) -> None:
        self.games += len(results)
        self.seconds += sum(r.seconds for r in results)

    def per_game(self) -> float | None:
        return self.seconds / self.games if self.games else None


class UnitSize:
    """How many games a unit holds: ``games_per_task`` games, or (``auto``) a number chosen from
    the pool's CPUs now and the seconds per game measured so far (before any, a rough figure for
    the search ``depth``; see ``games``). Units too short leave CPUs waiting for the driver, whose
    process spends about 0.3 ms of CPU on each; units too long leave CPUs idle at the end of a
    round. The size never changes a result, only when games are played."""

    # a unit's worker overhead (Ray's 1 ms, and a player build of up to 5 ms where the worker
    # has not built that candidate's yet) stays about 1%
    MIN_UNIT_SECONDS = 0.5
    # the driver's CPU time per unit: its process's, Ray's threads in it included (0.30 ms
    # measured with empty tasks, bench/record_game_times.py)
    DRIVER_SECONDS_PER_UNIT = 0.0003
    UNITS_PER_CPU = 2  # a round spread over every CPU, with units to even out its end
    # Seconds a game takes by search depth, roughly (shipped configs, one core of a 2020s
    # machine): what sizes the first units, before any game has been timed.
    PRIOR_SECONDS = (0.0005, 0.004, 0.07, 2.0, 25.0, 300.0)

    def __init__(self, games_per_task: int | str, cpus: Callable[[], int] = lambda: 1,
                 depth: DepthPolicy = 1, times: GameTimes | None = None, most: int = 100_000):
        self.fixed = None if games_per_task == "auto" else int(games_per_task)
        self.cpus = cpus
        self.depth = depth
        self.times = times if times is not None else GameTimes()
        self.most = most

    @classmethod
    def rough_seconds(cls, depth: DepthPolicy) -> float:
        """The rough seconds of one game at a search depth or policy."""
        return cls.PRIOR_SECONDS[min(rough_depth(depth), len(cls.PRIOR_SECONDS) - 1)]

    def games(self, waiting: int = 0) -> int:
        """Games the next unit holds. ``auto``: long enough that the driver keeps up with every
        CPU (the floor), and otherwise about ``MIN_UNIT_SECONDS`` long, but short enough that
        the ``waiting`` games make ``UNITS_PER_CPU`` units per CPU. Asked once a unit as a
        round is handed out, it gives smaller units as the round's end nears (guided
        self-scheduling), so that the round's last units end close together."""
        if self.fixed is not None:
            return self.fixed
        measured = self.times.per_game()
        per_game = max(measured if measured is not None else self.rough_seconds(self.depth), 1e-6)
        cpus = max(1, self.cpus())  # none while every node is gone: the driver waits for one
        floor = cpus * self.DRIVER_SECONDS_PER_UNIT / per_game
        wanted = max(self.MIN_UNIT_SECONDS / per_game, 2 * floor)
        if waiting:
            wanted = max(floor, min(wanted, waiting / (self.UNITS_PER_CPU * cpus)))
        return max(1, min(self.most, math.ceil(wanted)))


# cmaes.popsize: auto gives every CPU at least this much of a generation's games (at ``most``
# games a candidate, the rough game time for the depth): enough that the driver's work between
# generations and the last units of each round stay small beside it (bench/cluster_scale.py)
FILL_SECONDS = 3.0
FILL_GAMES = 48


def auto_popsize(cpus: int, depth: int, most: int, smallest: int, largest: int) -> int:
    """The population ``cmaes.popsize: auto`` resolves to on ``cpus`` CPUs: the smallest, and at
    least ``smallest`` (pycma's default), whose generation gives every CPU ``FILL_SECONDS`` or
    ``FILL_GAMES`` games of work, whichever is longer; at most ``largest``. A small cluster keeps
    pycma's default; a large one gets more candidates per generation, the work that can fill it
    without waiting on the race."""
    per_game = UnitSize.rough_seconds(depth)
    per_cpu = max(FILL_SECONDS, FILL_GAMES * per_game)
    return max(smallest, min(largest, math.ceil(per_cpu * cpus / (most * per_game))))
