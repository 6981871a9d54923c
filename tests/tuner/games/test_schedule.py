"""Schedules: what is played when never changes which games count.

Every test drives a schedule as a cluster would, with units finishing in a random order, and
checks the results against the round-by-round race of tune2048 0.2 written out plainly here.
"""

from __future__ import annotations

import random

import pytest

from engine.solver import GameResult
from tuner.games.budget import AdaptiveGames, FixedGames
from tuner.games.fitness import score_fitness
from tuner.games.policy import GameTimes, SchedulePolicy, UnitSize
from tuner.games.pycma import rank_weights
from tuner.games.schedule import AllGames, GenerationGames, Unit
from tuner.games.schedule import drive as drive_on_pool

WEIGHTS = rank_weights(2, 8)
SEEDS = list(range(1000, 1512))


def game(candidate: int, seed: int) -> GameResult:
    """A made-up game: candidates differ in mean by steps about one standard error of 64 games
    apart, so races end at every round."""
    noise = random.Random(seed * 1009 + candidate).gauss(0, 1)
    score = int(10_000 + 700 * candidate + 5_000 * noise)
    return GameResult(seed, max(score, 0), 2048, 500, 0.01, 1000, 0)


def fitness(results):
    return score_fitness(results, "mean_score")


def round_by_round(candidates: int, budget):
    """The race as tune2048 0.2 played it: everyone's first games, then rounds for the
    undecided."""
    results = [[game(c, s) for s in SEEDS[: budget.first]] for c in range(candidates)]
    fits = [fitness(r) for r in results]
    rounds = 1
    while more := budget.more(fits, WEIGHTS):
        rounds += 1
        for c, n in more.items():
            played = len(results[c])
            results[c] = results[c] + [game(c, s) for s in SEEDS[played: played + n]]
            fits[c] = fitness(results[c])
    return results, fits, rounds


def drive(schedule, cpus: int, unit_games: int, rng: random.Random, speculates: bool = True):
    """Run ``schedule`` on ``cpus`` simulated CPUs whose units finish in a random order; a
    driver that does not speculate offers it no idle CPU (the barrier dispatch)."""
    in_flight: list[Unit] = []
    handed_out = []
    while not schedule.done:
        idle = max(0, cpus - len(in_flight)) if speculates else 0
        units = schedule.next_units(idle, UnitSize(unit_games))
        handed_out += units
        in_flight += units
        assert in_flight, "the schedule is not done and hands out nothing"
        unit = in_flight.pop(rng.randrange(len(in_flight)))
        schedule.record(unit, [game(unit.job, s) for s in unit.seeds])
    return handed_out


BUDGETS = [AdaptiveGames(64, 512, 64), AdaptiveGames(32, 128, 32), AdaptiveGames(16, 100, 12),
           FixedGames(64)]


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: b.describe())
@pytest.mark.parametrize("dispatch", ["pipelined", "barrier"])
@pytest.mark.parametrize("cpus, unit_games", [(1, 16), (3, 5), (16, 16), (64, 1), (512, 7)])
def test_any_dispatch_cpus_and_unit_size_count_the_games_the_round_by_round_race_plays(
        budget, dispatch, cpus, unit_games):
    expected, expected_fits, expected_rounds = round_by_round(8, budget)
    for order in range(3):
        schedule = GenerationGames(8, SEEDS, budget, WEIGHTS, fitness)
        drive(schedule, cpus, unit_games, random.Random(order), dispatch == "pipelined")
        assert schedule.results() == expected
        assert schedule.fits == expected_fits
        assert schedule.rounds == expected_rounds


def test_the_made_up_games_make_races_of_several_rounds():
    """Otherwise the test above would check little."""
    rounds = {round_by_round(8, budget)[2] for budget in BUDGETS[:3]}
    assert max(rounds) >= 3


def test_barrier_dispatch_never_speculates_and_pipelined_fills_idle_cpus_only():
    budget = AdaptiveGames(64, 512, 64)
    barrier = GenerationGames(8, SEEDS, budget, WEIGHTS, fitness)
    assert not any(u.speculative for u in drive(barrier, 64, 16, random.Random(1), False))

    pipelined = GenerationGames(8, SEEDS, budget, WEIGHTS, fitness)
    first = pipelined.next_units(40, UnitSize(16))  # 8 candidates x 64 games = 32 units asked for
    assert [u.speculative for u in first] == [False] * 32 + [True] * 8
    assert pipelined.next_units(0, UnitSize(16)) == []  # nothing new is asked for, no CPU idle
    # the speculative units are every candidate's next games, earliest first
    assert [(u.job, u.start) for u in first[32:]] == [(c, 64) for c in range(8)]


def test_speculative_games_that_the_race_asks_for_are_not_played_twice():
    budget = AdaptiveGames(64, 512, 64)
    schedule = GenerationGames(8, SEEDS, budget, WEIGHTS, fitness)
    handed_out = drive(schedule, 512, 16, random.Random(2))
    per_game = [(u.job, u.start + i) for u in handed_out for i in range(len(u.seeds))]
    assert len(per_game) == len(set(per_game))
    assert sum(u.speculative for u in handed_out) > 0


def test_a_candidate_stopped_by_the_race_is_not_played_speculatively():
    budget = AdaptiveGames(64, 512, 64)
    schedule = GenerationGames(8, SEEDS, budget, WEIGHTS, fitness)
    while not (set(range(8)) - schedule.racing):  # play the rounds until one is stopped
        for unit in schedule.next_units(0, UnitSize(64)):
            schedule.record(unit, [game(unit.job, s) for s in unit.seeds])
    assert not schedule.done
    assert {u.job for u in schedule.next_units(1000, UnitSize(64)) if u.speculative} <= schedule.racing


@pytest.mark.parametrize("unit_games", [1, 3, 100])
def test_all_games_hands_out_every_game_at_once_and_returns_them_in_seed_order(unit_games):
    seeds = [SEEDS[:10], SEEDS[5:12], SEEDS[:1]]
    schedule = AllGames(seeds)
    units = schedule.next_units(0, UnitSize(unit_games))
    assert sum(len(u.seeds) for u in units) == 18
    assert schedule.next_units(99, UnitSize(unit_games)) == []
    for unit in reversed(units):
        assert not schedule.done
        schedule.record(unit, [game(unit.job, s) for s in unit.seeds])
    assert schedule.done
    assert schedule.results() == [[game(j, s) for s in job] for j, job in enumerate(seeds)]


def test_a_unit_with_the_wrong_number_of_results_is_refused():
    schedule = AllGames([SEEDS[:4]])
    [unit] = schedule.next_units(0, UnitSize(4))
    with pytest.raises(ValueError, match="3 results for a unit of 4 games"):
        schedule.record(unit, [game(0, s) for s in SEEDS[:3]])


def test_an_unknown_dispatch_is_refused():
    with pytest.raises(ValueError, match="dispatch 'eager'"):
        SchedulePolicy(4, "eager")


class RecordingPool:
    """A pool of ``cpus`` CPUs that finishes units in the order given, one a wait unless the
    driver waits for all; it records what the driver asked."""

    def __init__(self, cpus: int):
        self.n = cpus
        self.in_flight: list[Unit] = []
        self.waits: list[tuple[int, int, int]] = []  # (count, in flight, speculative of them)
        self.abandoned: list[Unit] = []

    def cpus(self) -> int:
        return self.n

    def idle(self) -> int:
        return max(0, self.n - len(self.in_flight))

    def submit(self, unit: Unit) -> None:
        self.in_flight.append(unit)

    def wait(self, count: int):
        self.waits.append((count, len(self.in_flight),
                           sum(u.speculative for u in self.in_flight)))
        done = self.in_flight[:count]
        self.in_flight = self.in_flight[count:]
        return [(u, [game(u.job, s) for s in u.seeds]) for u in done]

    def abandon(self) -> None:
        self.abandoned, self.in_flight = self.in_flight, []


@pytest.mark.parametrize("cpus", [3, 40, 100])
def test_the_driver_wakes_when_a_cpu_runs_dry_only_where_the_schedule_can_fill_it(cpus):
    budget = AdaptiveGames(32, 128, 32)
    pool = RecordingPool(cpus)
    schedule = GenerationGames(8, SEEDS, budget, WEIGHTS, fitness)
    assert drive_on_pool(schedule, pool, SchedulePolicy(4), GameTimes()) == \
        round_by_round(8, budget)[0]
    # the unit that leaves a CPU without queued work, never one before; or, once nothing is
    # left to speculate on, all of them
    dry = [max(1, in_flight - cpus + 1) for _, in_flight, _ in pool.waits]
    assert all(count in (first_dry, in_flight)
               for (count, in_flight, _), first_dry in zip(pool.waits, dry))
    assert any(count < in_flight for count, in_flight, _ in pool.waits)
    assert any(speculative for _, _, speculative in pool.waits)
    assert not pool.in_flight and all(u.speculative for u in pool.abandoned)

    barrier = RecordingPool(cpus)
    drive_on_pool(GenerationGames(8, SEEDS, budget, WEIGHTS, fitness), barrier,
                  SchedulePolicy(4, "barrier"), GameTimes())
    # nothing to give a CPU that runs dry: it wakes once every unit in flight has finished
    assert all(count == in_flight for count, in_flight, _ in barrier.waits)
    assert not any(speculative for _, _, speculative in barrier.waits) and not barrier.abandoned


def test_the_driver_counts_each_units_games_as_progress_and_sizes_units_as_told():
    done = []
    pool = RecordingPool(cpus=2)
    submitted = []
    pool.submit = lambda unit: (submitted.append(unit), pool.in_flight.append(unit))
    drive_on_pool(AllGames([SEEDS[:10], SEEDS[:7]]), pool, SchedulePolicy(3), GameTimes(),
                  progress=done.append)
    assert sum(done) == 17 and max(len(u.seeds) for u in submitted) == 3


class Timed:
    def __init__(self, seconds):
        self.seconds = seconds


def timed(cpus: int, seconds: float, games: int = 10, per_task: int | str = "auto") -> UnitSize:
    """A unit size on ``cpus`` CPUs once ``games`` games of ``seconds`` each were measured."""
    times = GameTimes()
    times.add([Timed(seconds)] * games)
    return UnitSize(per_task, lambda: cpus, times=times)


def test_a_fixed_unit_size_never_changes():
    assert timed(512, 10.0, 5, per_task=16).games() == 16


@pytest.mark.parametrize("cpus, seconds, expected", [
    (2, 0.004, 125),     # 0.5 s at least: a hundred games at depth 1 on a small machine
    (2, 2.0, 1),         # one game at depth 3
    (128, 0.002, 250),
    (1024, 0.002, 308),  # twice 0.3 ms of the driver's time per CPU: 0.61 s
    (512, 0.0000001, 100_000),  # never more than a task may hold
])
def test_auto_units_last_long_enough_for_the_driver_to_feed_every_cpu(cpus, seconds, expected):
    assert timed(cpus, seconds).games() == expected


def test_auto_units_with_every_node_gone_are_sized_as_for_one_cpu():
    gone, one = timed(0, 0.004), timed(1, 0.004)
    assert gone.games(waiting=640) == one.games(waiting=640) == 125


def test_auto_units_start_from_the_depths_rough_game_time_until_games_are_timed():
    assert UnitSize("auto", lambda: 2, depth=3).games() == 1
    assert UnitSize("auto", lambda: 2, depth=1).games() == \
        round(UnitSize.MIN_UNIT_SECONDS / UnitSize.PRIOR_SECONDS[1])
