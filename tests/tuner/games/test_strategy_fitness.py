"""CMA-ES strategy (maximisation, pickled state, restarts) and fitness definitions."""

from __future__ import annotations

import numpy as np
import pytest

from engine.solver import GameResult
from tuner.games.fitness import (
    Fitness,
    Gain,
    paired_difference,
    score_fitness,
    within_noise,
)
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


# ---- the difference of two players on the same seeds ----------------------------------------

LUCK = [0, 30_000, 5_000, 60_000, 12_000, 45_000, 2_000, 20_000]  # what each seed deals anyone


def test_a_paired_difference_cancels_what_a_seed_does_to_both_players():
    better = results([luck + 1_000 + 50 * i for i, luck in enumerate(LUCK)])
    worse = results(LUCK)
    gain = paired_difference(better, worse, "mean_score")
    assert gain.value == pytest.approx(1_175) and gain.games == 8
    assert gain.stderr == pytest.approx(np.std([50 * i for i in range(8)], ddof=1) / np.sqrt(8))
    own = [score_fitness(games, "mean_score").stderr for games in (better, worse)]
    assert gain.stderr < np.hypot(*own) / 100  # the seeds' luck is gone from the difference
    reach = paired_difference(results(LUCK, [4096] * 8), results(LUCK, [2048, 4096] * 4),
                              "reach_rate", tile=4096)
    assert reach.value == 0.5  # a share of games, as the fitness is


def test_a_paired_quantile_difference_bootstraps_the_same_seeds_for_both():
    scores = list(range(1_000, 11_000, 100))
    better, worse = results([s + 500 for s in scores]), results(scores)
    a = paired_difference(better, worse, "score_quantile", quantile=0.25)
    assert a.value == pytest.approx(500) and a.stderr == pytest.approx(0, abs=1e-9)
    assert paired_difference(better, worse, "score_quantile", quantile=0.25) == a  # reproducible
    alone = paired_difference(results([5]), results([3]), "score_quantile", quantile=0.25)
    assert alone.value == 2 and alone.stderr == np.inf  # one game: no interval


def test_games_on_other_seeds_are_no_pairs():
    shifted = [GameResult(i + 1, 10, 2048, 10, 0.1, 100, 0) for i in range(4)]
    with pytest.raises(ValueError, match="share their seeds"):
        paired_difference(results([10] * 4), shifted, "mean_score")


@pytest.mark.parametrize(("gain", "words"), [
    (Gain("start", 9_657, 2_000, 500, True),
     "the winner beat the start (+9,657 +/- 3,920, paired on the same 500 games)"),
    (Gain("start", 9_657, 6_000, 500, True),
     ("the winner did not beat the start: within noise (+9,657 +/- 11,760, paired on the "
      "same 500 games)")),
    (Gain("start", -3_000, 1_000, 500, True),
     "the start beat the winner (-3,000 +/- 1,960, paired on the same 500 games)"),
    (Gain("start", 0.0, 0.0, 8, True),
     "the winner scored as the start in every game (paired on the same 8 games)"),
    (Gain("start", 500, float("inf"), 1, True),
     ("the winner did not beat the start: within noise (+500 (one game: no interval), paired "
      "on the same 1 game)")),
    (Gain("baseline classic-reference", 0.1, 0.01, None, False),
     "the winner beat the baseline classic-reference (+0.1 +/- 0.0196, unpaired)"),
])
def test_a_gain_says_whether_the_winner_beat_its_mark(gain, words):
    assert gain.words() == words
    assert gain.within_noise == ("within noise" in words or "every game" in words)
