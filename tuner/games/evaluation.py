"""Playing candidates' games: one small interface (``Evaluator``) with two backends, this
process (``SerialEvaluator``, here) and Ray (``tuner.cluster.ray_evaluator``).

A *job* is one candidate's games. What is played when is a *schedule*'s decision
(``tuner.games.schedule``): it hands out *units* of at most ``games_per_task`` games (``auto``:
sized from the cluster and the measured game time, ``tuner.games.policy.UnitSize``) and takes
their results back in any order, and every unit carries its job and position, so results are
assembled in seed order whatever order the workers finish in: a run's numbers never depend on
the number of workers. ``play`` runs the plainest schedule (every job's games); ``run`` any
schedule. ``play_unit`` is the function every backend runs for a unit, on a Ray worker or here.
"""

from __future__ import annotations

import logging
import traceback
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, Self

from engine.errors import Tune2048Error
from engine.external.player import EngineLost, EnginePlayer, close_kept, play_games
from engine.families.guard import family_code_error, is_interrupt
from engine.solver import GameResult, PlayerSpec
from tuner import installed
from tuner.errors import EvaluationError
from tuner.games.policy import GameTimes, SchedulePolicy, UnitSize
from tuner.games.schedule import AllGames, Schedule, Unit, drive
from tuner.ray_api import on_ray_worker

log = logging.getLogger(__name__)

SOLVER_CACHE_SIZE = 16  # a generation's candidates, so a worker rarely rebuilds tables


@dataclass(frozen=True)
class Job:
    """All the games one candidate plays in one evaluation."""

    candidate: int
    spec: PlayerSpec | EnginePlayer
    seeds: tuple[int, ...]


def rough_cpu_seconds_of_jobs(jobs: Sequence[Job]) -> float | None:
    """Roughly the CPU time the jobs' games take (``UnitSize``'s game time for each depth),
    enough to tell a job Ray cannot shorten; None where a player is not our engine's (an
    external engine's games take whatever time it takes)."""
    if not all(isinstance(job.spec, PlayerSpec) for job in jobs):
        return None
    return sum(len(job.seeds) * UnitSize.rough_seconds(job.spec.depth) for job in jobs)


class GameCrash(Exception):
    """An exception raised inside a game, with the candidate, the seed and the traceback."""


class WrongCode(Exception):
    """A worker runs other tune2048 code than the driver (``tuner.installed``)."""


class SolverCache:
    """The last ``SOLVER_CACHE_SIZE`` players a worker built, told apart by everything their
    tables and search are built from; the oldest goes first."""

    def __init__(self):
        self._built: OrderedDict = OrderedDict()

    @staticmethod
    def _key(spec: PlayerSpec) -> tuple:
        return spec.family, tuple(spec.weights.items()), spec.depth, spec.cutoff

    def __contains__(self, spec: PlayerSpec) -> bool:
        return self._key(spec) in self._built

    def get(self, spec: PlayerSpec, build: Callable[[PlayerSpec], object]):
        """``spec``'s player, built with ``build`` unless kept."""
        key = self._key(spec)
        if key not in self._built:
            self._built[key] = build(spec)
            if len(self._built) > SOLVER_CACHE_SIZE:
                self._built.popitem(last=False)
        return self._built[key]


_solvers = SolverCache()  # this worker process's


def play_unit(
    candidate: int, spec: PlayerSpec | EnginePlayer, seeds: Sequence[int],
    driver: installed.Code,
) -> list[GameResult]:
    """Play one unit of games; the function every backend runs, refusing a ``driver`` that runs
    other code than this process. An external engine's failure is ``EngineLost``, which every
    backend plays again (``max_retries``)."""
    here = installed.code()
    if here.digest != driver.digest:  # the same seed must play the same game on every node
        raise WrongCode(installed.refusal(here, driver))
    if isinstance(spec, EnginePlayer):
        return play_games(spec, list(seeds))
    solver = _solver(spec)
    return _each_game(candidate, spec, seeds, solver.play)


def _solver(spec: PlayerSpec):
    """The worker's solver for ``spec``, built unless kept; the family's failure as one line."""
    try:
        return _solvers.get(spec, PlayerSpec.solver)
    except BaseException as err:
        if isinstance(err, Tune2048Error) or (is_interrupt(err) and not on_ray_worker()):
            raise  # one line already (the family guard's FamilyCodeError), or a real Ctrl-C
        # What the family guard let through. Raised as it is, SystemExit would end the Ray
        # worker (Ray then retries the unit on another, which dies the same way) and
        # KeyboardInterrupt would pass for a cancelled task: one line crosses instead. On a
        # worker every KeyboardInterrupt is taken for the family's: a Ctrl-C that reached the
        # worker reached the driver too, whose interrupt is what the driver reports.
        raise family_code_error(spec.family, "building a player", err) from None


def _each_game(candidate: int, spec: PlayerSpec, seeds: Sequence[int], play: Callable) -> list:
    """``play(seed)`` for every seed; a failure as a ``GameCrash`` naming the game."""
    results = []
    for seed in seeds:
        try:
            results.append(play(seed))
        except Exception:  # noqa: BLE001 - any engine failure is reported with its seed
            raise GameCrash(
                f"a game crashed: candidate {candidate}, seed {seed}, weights {spec.weights}\n"
                f"{traceback.format_exc()}"
            ) from None
    return results


class Evaluator(Protocol):
    """What plays candidates' games, for the tuning loop and the commands alike: ``play`` and
    ``run`` return each job's results in seed order, whatever order they were played in. A
    context manager: leaving the block ends what it holds (``close``)."""

    workers: int

    def play(self, jobs: Sequence[Job], progress: Callable[[int], None] | None = None,
             on_results: Callable[[int, list[GameResult]], None] | None = None,
             ) -> list[list[GameResult]]:
        """Play all of every job's seeds; ``progress`` is called with the number of games each
        unit played, ``on_results`` with its job's index in ``jobs`` and its games."""

    def run(self, jobs: Sequence[Job], schedule: Schedule,
            progress: Callable[[int], None] | None = None) -> list[list[GameResult]]:
        """Play what ``schedule`` hands out (its units' jobs index ``jobs``) until it is done;
        its results."""

    def cpu_seconds(self, start: float, end: float) -> float:
        """The CPU-seconds of the CPUs present from ``start`` to ``end`` (``time.perf_counter``
        readings), counted as nodes join and leave: the share's denominator
        (``tuner.games.throughput``)."""

    def describe(self) -> str:
        """Where the games are played, for the run's first line."""

    def close(self) -> None:
        """End what the evaluator holds; safe to call twice."""

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc_info) -> None: ...


class _Backend:
    """What both evaluators share: ``play`` is ``run`` with every job's games, and a context."""

    def play(self, jobs: Sequence[Job], progress: Callable[[int], None] | None = None,
             on_results: Callable[[int, list[GameResult]], None] | None = None):
        return self.run(jobs, AllGames([job.seeds for job in jobs], on_results), progress)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class SerialEvaluator(_Backend):
    """Plays every unit in this process, in the order handed out: the reference backend. It never
    has an idle CPU, so a schedule never speculates here. A unit an external engine failed is
    played again, at most ``max_retries`` times, as Ray plays a lost unit again."""

    def __init__(self, policy: SchedulePolicy | int | str = 16, max_retries: int = 3):
        self.policy = SchedulePolicy.of(policy)
        self.max_retries = max_retries
        self.times = GameTimes()
        self.workers = 1

    def run(self, jobs: Sequence[Job], schedule: Schedule,
            progress: Callable[[int], None] | None = None):
        depth = jobs[0].spec.depth if jobs else 1
        return drive(schedule, _InProcess(jobs, self.max_retries), self.policy, self.times,
                     depth, progress)

    def cpu_seconds(self, start: float, end: float) -> float:
        return self.workers * (end - start)

    def describe(self) -> str:
        return "this process (1 CPU)"

    def close(self) -> None:
        close_kept()  # an external engine this process kept


class _InProcess:
    """The pool of one CPU that is this process: units are played in the order given."""

    def __init__(self, jobs: Sequence[Job], max_retries: int):
        self.jobs = jobs
        self.max_retries = max_retries
        self.given: list[Unit] = []

    def cpus(self) -> int:
        return 1

    def idle(self) -> int:
        return 0

    def submit(self, unit: Unit) -> None:
        self.given.append(unit)

    def wait(self, count: int) -> list[tuple[Unit, list[GameResult]]]:
        finished = []
        for unit in self.given[:count]:
            finished.append((unit, self._play(self.jobs[unit.job], unit)))
        del self.given[:count]
        return finished

    def _play(self, job: Job, unit: Unit) -> list[GameResult]:
        retried = 0
        while True:
            try:
                return play_unit(job.candidate, job.spec, unit.seeds, installed.code())
            except GameCrash as crash:
                raise EvaluationError(str(crash)) from None
            except EngineLost as lost:
                if retried == self.max_retries:
                    raise EvaluationError(engine_lost_text(job, retried, lost)) from None
                retried += 1
                log.warning("candidate %d: %s; playing its unit again", job.candidate, lost)

    def abandon(self) -> None:
        self.given.clear()


def engine_lost_text(job: Job, retries: int, lost: EngineLost) -> str:
    """The one line that ends a run whose engine failed a unit after every retry."""
    again = ("and its retry" if retries == 1 else f"and its {retries} retries" if retries else
             "(no retries)")
    return f"candidate {job.candidate}: the engine failed a unit {again}: {lost}"
