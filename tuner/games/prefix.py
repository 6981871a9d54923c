"""Games played in seed order until what has finished says stop: the schedule of ``tune compare
--sequential`` (``tuner.games.schedule`` has the others and the driver, ``drive``).

The jobs play their seeds in step, the earliest first. The *prefix* is the longest run of first
games that every job has finished: game ``i`` of every job, for every ``i`` below its length.
Each time it grows, its new rows (game ``i`` of each job, in seed order) go to a rule that says
whether to stop. So the rule sees the same rows in the same order however many CPUs play,
whichever unit finishes first, and whichever games an earlier sitting kept (``held``): where it
stops is a function of the seeds' games alone. Units still in flight when it stops are left to
the driver, which abandons them; games finished beyond the prefix do not count.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from tuner.games.schedule import Unit

if TYPE_CHECKING:
    from engine.solver import GameResult
    from tuner.games.policy import UnitSize

Row = tuple["GameResult", ...]  # game i of every job


class PrefixGames:
    """Every job's ``seeds`` (job ``j``'s games by index in ``held[j]`` are not played again),
    earliest first, until ``stop(rows)``, told each new row of the prefix in order, returns
    True, or every seed is played. ``on_record(job, results)`` sees each unit's games as they
    arrive (so that a long comparison keeps them as it goes)."""

    def __init__(self, seeds: Sequence[Sequence[int]], stop: Callable[[list[Row]], bool],
                 held: Sequence[Mapping[int, GameResult]] | None = None,
                 on_record: Callable[[int, list[GameResult]], None] | None = None):
        self.seeds = [tuple(s) for s in seeds]
        self.received: list[dict[int, GameResult]] = [
            dict(games) for games in (held or [{} for _ in self.seeds])]
        self.prefix = 0  # rows every job has finished
        self.in_flight = 0  # games handed out, not back yet (once done: those abandoned)
        self._stop = stop
        self._on_record = on_record
        self._next = [0] * len(self.seeds)  # per job: no game before it waits to be handed out
        self._waiting = sum(len(s) for s in self.seeds) - sum(map(len, self.received))
        self._units = 0  # units in flight
        self._done = False
        self._advance()

    def next_units(self, idle: int, size: UnitSize) -> list[Unit]:
        """A unit for each idle CPU, earliest games first; with none in flight, one for every
        CPU (the ``barrier`` dispatch offers no idle CPUs)."""
        found: list[Unit] = []
        wanted = idle if self._units else max(idle, size.cpus(), 1)
        while not self._done and len(found) < wanted and (unit := self._unit(size)):
            found.append(unit)
        return found

    def _unit(self, size: UnitSize) -> Unit | None:
        """The next games of the job furthest behind, up to the next game it holds."""
        for j, received in enumerate(self.received):
            while self._next[j] < len(self.seeds[j]) and self._next[j] in received:
                self._next[j] += 1
        open_jobs = [j for j in range(len(self.seeds)) if self._next[j] < len(self.seeds[j])]
        if not open_jobs:
            return None
        job = min(open_jobs, key=lambda j: (self._next[j], j))
        start = end = self._next[job]
        most = start + size.games(self._waiting)
        while end < min(most, len(self.seeds[job])) and end not in self.received[job]:
            end += 1
        self._next[job] = end
        self._waiting -= end - start
        self.in_flight += end - start
        self._units += 1
        return Unit(job, start, self.seeds[job][start:end])

    def record(self, unit: Unit, results: list[GameResult]) -> None:
        if len(results) != len(unit.seeds):
            raise ValueError(f"{len(results)} results for a unit of {len(unit.seeds)} games")
        self._units -= 1
        self.in_flight -= len(results)
        self.received[unit.job].update(enumerate(results, unit.start))
        if self._on_record is not None:
            self._on_record(unit.job, results)
        self._advance()

    def _advance(self) -> None:
        """Hand the prefix's new rows to the rule; stop where it says, or at the last seed."""
        if self._done:
            return
        rows = []
        while self.prefix < min(map(len, self.seeds)) and all(
                self.prefix in received for received in self.received):
            rows.append(tuple(received[self.prefix] for received in self.received))
            self.prefix += 1
        if (rows and self._stop(rows)) or self.prefix == min(map(len, self.seeds)):
            self._done = True

    @property
    def can_speculate(self) -> bool:
        """Whether a CPU that frees up now gets a unit: while games wait to be handed out."""
        return not self._done and self._waiting > 0

    @property
    def done(self) -> bool:
        return self._done

    def results(self) -> list[list[GameResult]]:
        """Each job's games of the prefix, in seed order."""
        return [[received[i] for i in range(self.prefix)] for received in self.received]
