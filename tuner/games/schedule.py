"""What to play next: the scheduling policy, a plain object that any driver runs.

A *schedule* hands out *units* (a few consecutive games of one job) and takes their results back
in any order. What it decides depends only on the results, taken in seed order, never on when or
where they were played, so a run's history is the same on one CPU or a thousand, whatever the
size of the units. Drivers: the Ray and in-process evaluators (``tuner.games.evaluation``) and the
simulated cluster of ``bench/cluster_scale.py``; none of them is known here.

``AllGames``: every job plays all its seeds (comparisons, validation).

``drive``: the one loop that runs a schedule on a *pool* of CPUs (Ray's, this process's, a
simulated cluster's), so that what wakes the driver is decided once, here. It follows the run's
``SchedulePolicy`` (the config's ``ray.games_per_task`` and ``ray.dispatch``, built once from the
config and never changed): how many games a unit holds, and whether idle CPUs get speculative
units.

``GenerationGames``: a generation's training games under its budget (``tuner.games.budget``): every
candidate plays the budget's first games, then the race decides, round after round, which
candidates play more, by the budget's rule on every candidate's results so far, exactly as a
round-by-round loop would. Two dispatches (the policy's), one result:

- ``barrier`` hands out a round's units only, so CPUs wait while the last units of a round finish
  and while the race decides (the dispatch of tune2048 0.1 and 0.2);
- ``pipelined`` also hands out *speculative* units to CPUs that would otherwise wait: games of the
  candidates still in the race beyond what the race has asked for so far, earliest seeds first.
  When the race asks for them, they are already played (or playing); when it does not, they are
  not used. A candidate's fitness is always computed on exactly the games the race asked for, so
  the speculation changes when games are played, never which games count.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.depth import DepthPolicy
from tuner.games.budget import Budget
from tuner.games.policy import GameTimes, SchedulePolicy, UnitSize

if TYPE_CHECKING:
    from engine.solver import GameResult
    from tuner.games.fitness import Fitness

@dataclass(frozen=True)
class Unit:
    """Games ``start`` to ``start + len(seeds)`` of job ``job``. ``speculative``: played to keep a
    CPU busy before anything asked for it (its results are used only if something then does)."""

    job: int
    start: int
    seeds: tuple[int, ...]
    speculative: bool = False


class Schedule(Protocol):
    """What a driver runs: ask ``next_units`` whenever CPUs may be idle, start them, hand each
    unit's results to ``record`` as it finishes, until ``done``; then ``results``."""

    def next_units(self, idle: int, size: UnitSize) -> list[Unit]:
        """The units to start now: every unit the results so far ask for, then, to fill up to
        ``idle`` CPUs, speculative ones where the policy has them. ``size`` says how many games
        each unit holds (it never changes a result)."""

    def record(self, unit: Unit, results: list[GameResult]) -> None:
        """The results of a unit handed out before, in its seeds' order."""

    @property
    def can_speculate(self) -> bool:
        """Whether a CPU that frees up now could be given a speculative unit."""

    @property
    def done(self) -> bool:
        """Whether every game that counts has been played."""

    def results(self) -> list[list[GameResult]]:
        """Each job's games that count, in seed order."""


class Pool(Protocol):
    """Where units are played: it starts what it is given and says what has finished."""

    def cpus(self) -> int:
        """The CPUs it has now."""

    def idle(self) -> int:
        """CPUs that would have nothing to do once the units given so far are started."""

    def submit(self, unit: Unit) -> None:
        """Start (or queue) ``unit``."""

    def wait(self, count: int) -> list[tuple[Unit, list[GameResult]]]:
        """Finished units with their results: once ``count`` of them have finished, every one
        that has by then."""

    def abandon(self) -> None:
        """The units still in flight are no longer needed: let them end, unread."""


def drive(schedule: Schedule, pool: Pool, policy: SchedulePolicy, times: GameTimes,
          depth: DepthPolicy = 1,
          progress: Callable[[int], None] | None = None) -> list[list[GameResult]]:
    """Run ``schedule`` on ``pool`` until it is done, as ``policy`` says; its results. Units
    are sized for the pool's CPUs, the search ``depth`` and the game ``times`` measured so far,
    which the finished units add to.

    Where the schedule may speculate (and the policy lets it), the driver wakes when the first
    CPU runs out of work (the unit that finishes when no unit is left queued), so that the
    schedule can fill it. Otherwise it wakes once all the units in flight have finished: then
    nothing can be handed out before, and a driver that shares the cores with the workers cost
    them a fifth of their time at 2 workers on 2 cores when it woke once a unit."""
    size = UnitSize(policy.games_per_task, pool.cpus, depth, times)
    speculative = 0  # speculative units in flight
    in_flight = 0
    while not schedule.done:
        idle = pool.idle()  # asked either way: a pool counts its CPUs again as it answers
        for unit in schedule.next_units(idle if policy.speculates else 0, size):
            pool.submit(unit)
            in_flight += 1
            speculative += unit.speculative
        if not in_flight:
            if schedule.done:  # its last units answered without a pool (``tuner.games.kept``)
                break
            raise RuntimeError("the schedule is not done and hands out nothing")
        if speculative or (policy.speculates and schedule.can_speculate):
            count = max(1, in_flight - pool.cpus() + 1)
        else:
            count = in_flight
        for unit, results in pool.wait(count):
            in_flight -= 1
            speculative -= unit.speculative
            times.add(results)
            schedule.record(unit, results)
            if progress:
                progress(len(results))
    if in_flight:
        pool.abandon()
    return schedule.results()


class _Games:
    """Per job: the seeds it may play, the results received (by game index), how many games
    have been handed out and how many count (``want``). Counters keep every question the
    driver asks after each unit cheap, whatever the population."""

    def __init__(self, seeds: Sequence[Sequence[int]]):
        self.seeds = [tuple(s) for s in seeds]
        self.received: list[dict[int, GameResult]] = [{} for _ in self.seeds]
        self.handed_out = [0] * len(self.seeds)
        self.wanted = [0] * len(self.seeds)  # the first `wanted[j]` games of job j count
        self.unsent: set[int] = set()  # jobs with games that count, not handed out yet
        self._missing = [0] * len(self.seeds)  # of those, not received yet
        self._incomplete = 0  # jobs missing some
        self._waiting = 0  # games that count, not handed out yet

    def want(self, job: int, games: int) -> None:
        """The first ``games`` games of ``job`` count (never fewer than before)."""
        old = self.wanted[job]
        missing = sum(1 for i in range(old, games) if i not in self.received[job])
        if missing and not self._missing[job]:
            self._incomplete += 1
        self._missing[job] += missing
        self._waiting += max(0, games - max(old, self.handed_out[job]))
        self.wanted[job] = games
        if games > self.handed_out[job]:
            self.unsent.add(job)

    def units(self, job: int, upto: int, unit_games: Callable[[int], int],
              speculative: bool) -> list[Unit]:
        """Hand out job ``job``'s games up to index ``upto``, each unit as many as
        ``unit_games(games that count and are still waiting)`` says."""
        found = []
        while (start := self.handed_out[job]) < upto:
            end = min(upto, start + unit_games(self._waiting))
            self._waiting -= max(0, min(end, self.wanted[job]) - start)
            self.handed_out[job] = end
            found.append(Unit(job, start, self.seeds[job][start:end], speculative))
        if self.handed_out[job] >= self.wanted[job]:
            self.unsent.discard(job)
        return found

    def record(self, unit: Unit, results: list[GameResult]) -> None:
        if len(results) != len(unit.seeds):
            raise ValueError(f"{len(results)} results for a unit of {len(unit.seeds)} games")
        job, received = unit.job, self.received[unit.job]
        for index, result in enumerate(results, unit.start):
            if index < self.wanted[job] and index not in received:
                self._missing[job] -= 1
                if not self._missing[job]:
                    self._incomplete -= 1
            received[index] = result

    def wanted_units(self, size: UnitSize) -> list[Unit]:
        """Every game that counts and is not handed out yet, in units of ``size``."""
        return [unit for j in sorted(self.unsent)
                for unit in self.units(j, self.wanted[j], size.games, speculative=False)]

    def all_complete(self) -> bool:
        """Whether every game that counts, of every job, has come back."""
        return not self._incomplete

    def counted(self, job: int) -> list[GameResult]:
        return [self.received[job][i] for i in range(self.wanted[job])]


class AllGames:
    """Every job plays all its seeds; all units are handed out at once. ``on_record(job,
    results)``, if given, sees each unit's results as they arrive (so that a long comparison can
    keep its games as it goes)."""

    def __init__(self, seeds: Sequence[Sequence[int]],
                 on_record: Callable[[int, list[GameResult]], None] | None = None):
        self._games = _Games(seeds)
        for job, job_seeds in enumerate(self._games.seeds):
            self._games.want(job, len(job_seeds))
        self._on_record = on_record

    def next_units(self, idle: int, size: UnitSize) -> list[Unit]:
        return self._games.wanted_units(size)

    def record(self, unit: Unit, results: list[GameResult]) -> None:
        self._games.record(unit, results)
        if self._on_record is not None:
            self._on_record(unit.job, results)

    can_speculate = False

    @property
    def done(self) -> bool:
        return self._games.all_complete()

    def results(self) -> list[list[GameResult]]:
        return [self._games.counted(j) for j in range(len(self._games.seeds))]


class GenerationGames:
    """A generation's training games: ``candidates`` candidates on the generation's ``seeds``
    (at least ``budget.most`` of them) under ``budget``, the race ranked with ``rank_weights``
    and ``fitness`` (results -> ``Fitness``). It speculates where the driver offers it idle
    CPUs (the ``pipelined`` dispatch)."""

    def __init__(self, candidates: int, seeds: Sequence[int], budget: Budget,
                 rank_weights: Sequence[float], fitness: Callable[[list[GameResult]], Fitness]):
        self.budget = budget
        self.rank_weights = list(rank_weights)
        self.fitness = fitness
        self._games = _Games([tuple(seeds[: budget.most])] * candidates)
        for candidate in range(candidates):
            self._games.want(candidate, budget.first)
        self.racing = set(range(candidates))  # asked for more at the last decision (or none yet)
        self.rounds = 1
        self.fits: list[Fitness] = []
        self._done = False
        self._next_in_race()

    def _next_in_race(self) -> None:
        """After a decision: the racing candidates by games handed out (a heap, refreshed as it
        is read), and how many games their next rounds hold, about."""
        games, most = self._games, self.budget.most
        self._queue = [(games.handed_out[j], j) for j in sorted(self.racing)
                       if games.handed_out[j] < most]
        heapq.heapify(self._queue)
        self._in_sight = sum(min(self.budget.first, most - games.handed_out[j])
                             for j in self.racing)

    def next_units(self, idle: int, size: UnitSize) -> list[Unit]:
        found = self._games.wanted_units(size)
        if not self._done:
            found += self._speculative(idle - len(found), size)
        return found

    def _speculative(self, idle: int, size: UnitSize) -> list[Unit]:
        """Up to ``idle`` units of the racing candidates' next games, the candidate with the
        fewest games handed out first (then the lower index), so every racing candidate's next
        round is ready before anyone's round after it. Units are sized as if the games in sight
        (every racing candidate's next ``budget.first`` games) were a round: a long speculative
        unit would hold up the round that needs its first games."""
        games, most, found = self._games, self.budget.most, []
        if idle <= 0:
            return found
        unit_games = size.games(self._in_sight)
        queue = self._queue
        while queue and len(found) < idle:
            handed_out, j = heapq.heappop(queue)
            if handed_out != games.handed_out[j]:  # more went out since: its place changed
                if games.handed_out[j] < most:
                    heapq.heappush(queue, (games.handed_out[j], j))
                continue
            found += games.units(j, min(handed_out + unit_games, most),
                                 lambda _waiting: unit_games, speculative=True)
            if games.handed_out[j] < most:
                heapq.heappush(queue, (games.handed_out[j], j))
        return found

    def record(self, unit: Unit, results: list[GameResult]) -> None:
        self._games.record(unit, results)
        self._decide()

    @property
    def can_speculate(self) -> bool:
        return not self._done and bool(self._queue)

    def _decide(self) -> None:
        """Take every race decision whose games are all in, as the round-by-round loop would:
        once every candidate's counted games are complete, the budget's rule says who plays more
        (and how many); none means the race is over."""
        games = self._games
        while not self._done and games.all_complete():
            # only the candidates that played more since the last decision have a new fitness
            self.fits = [fit if fit is not None and fit.games == games.wanted[j]
                         else self.fitness(games.counted(j))
                         for j, fit in enumerate(self.fits or [None] * len(games.seeds))]
            more = self.budget.more(self.fits, self.rank_weights)
            if not more:
                self._done = True
                self.racing = set()
                self._queue = []
                return
            self.rounds += 1
            self.racing = set(more)
            for j, n in more.items():
                games.want(j, games.wanted[j] + n)
            self._next_in_race()

    @property
    def done(self) -> bool:
        return self._done

    def results(self) -> list[list[GameResult]]:
        return [self._games.counted(j) for j in range(len(self._games.seeds))]
