"""PrefixGames: where the rule stops depends on the seeds' games alone, never on how many CPUs
play, in which order units finish, or which games an earlier sitting kept."""

from __future__ import annotations

import random

import pytest

from engine.solver import GameResult
from tuner.games.policy import GameTimes, SchedulePolicy, UnitSize
from tuner.games.prefix import PrefixGames
from tuner.games.schedule import Unit, drive

SEEDS = tuple(range(500, 700))


def game(job: int, seed: int) -> GameResult:
    score = random.Random(seed * 7 + job).randrange(1000, 50_000)
    return GameResult(seed, score, 2048, 100, 0.01, 100, 0)


class ShuffledPool:
    """``cpus`` CPUs whose units finish in a random order (``rng``), each wait any number of
    them; it records every unit handed to it and those left in flight."""

    def __init__(self, cpus: int, rng: random.Random):
        self.n, self.rng = cpus, rng
        self.in_flight: list[Unit] = []
        self.submitted: list[Unit] = []
        self.abandoned: list[Unit] = []

    def cpus(self) -> int:
        return self.n

    def idle(self) -> int:
        return max(0, self.n - len(self.in_flight))

    def submit(self, unit: Unit) -> None:
        self.in_flight.append(unit)
        self.submitted.append(unit)

    def wait(self, count: int):
        self.rng.shuffle(self.in_flight)
        done = self.in_flight[:max(count, self.rng.randint(1, len(self.in_flight)))]
        self.in_flight = self.in_flight[len(done):]
        return [(u, [game(u.job, s) for s in u.seeds]) for u in done]

    def abandon(self) -> None:
        self.abandoned, self.in_flight = self.in_flight, []


class Rule:
    """Stops once the sum of the rows' score differences passes ``limit``; keeps every row it
    was shown."""

    def __init__(self, limit: float):
        self.limit, self.total, self.rows = limit, 0, []

    def __call__(self, rows) -> bool:
        for a, b in rows:
            if abs(self.total) > self.limit:
                break
            self.rows.append((a.seed, a.score, b.seed, b.score))
            self.total += a.score - b.score
        return abs(self.total) > self.limit


def run(cpus: int, order: int, held=None, limit: float = 150_000, unit_games: int = 3,
        dispatch: str = "pipelined"):
    rule = Rule(limit)
    schedule = PrefixGames([SEEDS, SEEDS], rule, held)
    pool = ShuffledPool(cpus, random.Random(order))
    results = drive(schedule, pool, SchedulePolicy(unit_games, dispatch), GameTimes())
    return rule, schedule, pool, results


def test_the_rule_sees_the_rows_in_seed_order_whatever_the_cpus_and_the_order_of_finishing():
    reference, *_ = run(cpus=1, order=0)
    assert 30 < len(reference.rows) < len(SEEDS)  # it stopped before the last seed
    assert [row[0] for row in reference.rows] == list(SEEDS[:len(reference.rows)])
    for cpus in (2, 7, 64):
        for dispatch in ("pipelined", "barrier"):
            for order in range(3):
                rule, schedule, pool, results = run(cpus, order, dispatch=dispatch)
                assert rule.rows == reference.rows
                assert [len(r) for r in results] == [schedule.prefix] * 2
                assert schedule.prefix >= len(rule.rows)
                assert schedule.in_flight == sum(len(u.seeds) for u in pool.abandoned)


def test_held_games_are_not_played_again_and_count_as_played():
    reference, *_ = run(cpus=4, order=1)
    held = [{i: game(0, SEEDS[i]) for i in range(0, 120, 2)},
            {i: game(1, SEEDS[i]) for i in range(50)}]
    rule, _schedule, pool, _ = run(cpus=4, order=2, held=held)
    assert rule.rows == reference.rows
    for unit in pool.submitted:
        assert not set(range(unit.start, unit.start + len(unit.seeds))) & set(held[unit.job])


def test_games_held_that_decide_play_nothing():
    reference, *_ = run(cpus=1, order=0)
    held = [{i: game(j, SEEDS[i]) for i in range(len(reference.rows))} for j in (0, 1)]
    rule = Rule(150_000)
    schedule = PrefixGames([SEEDS, SEEDS], rule, held)
    assert schedule.done and rule.rows == reference.rows
    assert schedule.next_units(4, _size(3, 4)) == []


def test_a_rule_that_never_stops_plays_every_seed_once():
    rule, schedule, pool, results = run(cpus=5, order=3, limit=float("inf"))
    assert len(rule.rows) == len(SEEDS) and schedule.done and not pool.abandoned
    played = sorted((u.job, s) for u in pool.submitted for s in u.seeds)
    assert played == sorted((j, s) for j in (0, 1) for s in SEEDS)
    assert [[g.seed for g in r] for r in results] == [list(SEEDS)] * 2


def _size(games: int, cpus: int) -> UnitSize:
    return UnitSize(games, lambda: cpus)


def test_with_nothing_in_flight_it_hands_out_a_unit_per_cpu_then_one_per_idle_cpu():
    schedule = PrefixGames([SEEDS, SEEDS], Rule(float("inf")))
    first = schedule.next_units(0, _size(4, 6))  # the barrier dispatch offers no idle CPU
    assert len(first) == 6 and [u.job for u in first] == [0, 1, 0, 1, 0, 1]
    assert [u.start for u in first] == [0, 0, 4, 4, 8, 8]  # earliest seeds first, in step
    assert schedule.next_units(0, _size(4, 6)) == []
    assert len(schedule.next_units(2, _size(4, 6))) == 2
    with pytest.raises(ValueError, match="2 results for a unit of 4 games"):
        schedule.record(first[0], [game(0, s) for s in first[0].seeds[:2]])
