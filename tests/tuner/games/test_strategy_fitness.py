"""CMA-ES strategy (maximisation, pickled state, restarts) and fitness definitions."""

from __future__ import annotations

import numpy as np
import pytest

from engine.solver import GameResult
from tuner.games.fitness import Fitness, score_fitness, within_noise
from tuner.strategies.pycma_es import CMAES, CMAESStrategy


def sphere_fitness(x) -> float:
    return -float(np.sum((np.asarray(x) - 0.3) ** 2))


def test_strategy_maximises_fitness():
    strategy = CMAES([0.8, 0.8, 0.8], 0.2, 8, seed=3, restarts=0)
    for _ in range(60):
        xs = strategy.ask()
        strategy.tell(xs, [sphere_fitness(x) for x in xs])
    assert np.allclose(strategy.result.mean, 0.3, atol=0.02)


def test_strategy_state_round_trip_continues_identically():
    a = CMAES([0.5, 0.5], 0.3, 6, seed=11, restarts=0)
    for _ in range(3):
        xs = a.ask()
        a.tell(xs, [sphere_fitness(x) for x in xs])
    b = CMAES.loads(a.dumps())
    np.testing.assert_array_equal(np.array(a.ask()), np.array(b.ask()))


def test_the_result_is_the_mean_the_step_size_and_the_restarts_of_the_generation_told():
    strategy = CMAESStrategy("fixed", CMAES([0.5, 0.5], 0.3, 6, seed=11, restarts=0))
    xs = strategy.ask()
    strategy.tell(xs, [sphere_fitness(x) for x in xs])
    result = strategy.result
    es = strategy.cma_es.es
    np.testing.assert_array_equal(result.mean, es.result.xfavorite)
    assert (result.sigma, result.restart) == (es.sigma, 0) and result.sigma != 0.3
    assert strategy.stop() is None


def test_strategy_leaves_numpy_global_random_state_alone():
    np.random.seed(5)
    expected = np.random.rand()
    np.random.seed(5)
    strategy = CMAES([0.5, 0.5], 0.3, 6, seed=1, restarts=0)
    strategy.tell(strategy.ask(), [0.0] * 6)
    assert np.random.rand() == expected


def test_restart_doubles_the_population_when_cma_stops():
    strategy = CMAES([0.5, 0.5], 0.3, 4, seed=2, restarts=1)
    for _ in range(500):
        xs = strategy.ask()
        strategy.tell(xs, [1.0] * len(xs))  # flat fitness: pycma soon stops (tolflatfitness)
        stop = strategy.stop()
        if strategy.restart == 1:
            break
    assert strategy.restart == 1 and strategy.popsize == 8 and stop is None
    for _ in range(500):
        xs = strategy.ask()
        strategy.tell(xs, [1.0] * len(xs))
        stop = strategy.stop()
        if stop:
            break
    assert stop  # no restart left: the criteria are reported


def results(scores, tiles=None):
    tiles = tiles or [2048] * len(scores)
    return [GameResult(i, s, t, 10, 0.1, 100, 0) for i, (s, t) in enumerate(zip(scores, tiles))]


def test_mean_score_fitness_and_stderr():
    fit = score_fitness(results([10, 20, 30, 40]), "mean_score")
    assert fit.value == 25 and fit.games == 4
    assert fit.stderr == pytest.approx(np.std([10, 20, 30, 40], ddof=1) / 2)


def test_reach_rate():
    games = results([1, 2, 3, 4], tiles=[1024, 2048, 4096, 4096])
    assert score_fitness(games, "reach_rate", tile=4096).value == 0.5
    assert score_fitness(games, "reach_rate", tile=2048).value == 0.75


def test_score_quantile_is_a_lower_quantile_with_reproducible_stderr():
    games = results(list(range(100, 1100, 10)))
    a = score_fitness(games, "score_quantile", quantile=0.25)
    b = score_fitness(games, "score_quantile", quantile=0.25)
    assert a.value == pytest.approx(np.quantile(range(100, 1100, 10), 0.25))
    assert a.stderr == b.stderr and a.stderr > 0


def test_within_noise_compares_against_two_standard_errors():
    assert within_noise(Fitness(105, 3, 10), Fitness(100, 3, 10))
    assert not within_noise(Fitness(120, 3, 10), Fitness(100, 3, 10))
