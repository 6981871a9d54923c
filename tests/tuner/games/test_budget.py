"""Adaptive games: the race plays the candidates whose rank is undecided, and only those."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from tuner.games.budget import AdaptiveGames, FixedGames, undecided
from tuner.games.fitness import Fitness
from tuner.games.pycma import rank_weights

# pycma's recombination weights for 6 candidates (3 positive, 3 negative: active CMA)
WEIGHTS = list(AdaptiveGames(4, 8, 4).rank_weights(2, 6))


def fits(*values_and_errors, games=64):
    return [Fitness(value, error, games) for value, error in values_and_errors]


def test_pycma_weighs_every_rank_best_first_and_the_worst_half_negatively():
    assert len(WEIGHTS) == 6 and WEIGHTS == sorted(WEIGHTS, reverse=True)
    assert all(w > 0 for w in WEIGHTS[:3]) and all(w < 0 for w in WEIGHTS[3:])


# Hand-made weights, so that each case is easy to check: each rank counts 0.2 of the range more
# than the next (pycma's steps are 0.05 to 0.2 of the range).
LINEAR = [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]


def test_candidates_far_apart_are_decided_after_the_first_games():
    separated = fits(*[(1000.0 * k, 10.0) for k in range(6)])
    assert undecided(separated, LINEAR, 0.9, 0.1) == []
    assert AdaptiveGames(64, 512, 64).more(separated, WEIGHTS) == {}


def test_only_candidates_that_could_swap_ranks_worth_enough_play_more():
    # 0 and 1 could swap ranks 1 and 2 (0.2 of the range), 4 and 5 ranks 5 and 6
    close = fits((5000, 100), (5050, 100), (3000, 10), (2000, 10), (1000, 100), (1050, 100))
    assert undecided(close, LINEAR, 0.9, 0.1) == [0, 1, 4, 5]
    assert AdaptiveGames(64, 512, 32, 0.9, 0.1).more(close, LINEAR) == {0: 32, 1: 32, 4: 32,
                                                                        5: 32}
    assert undecided(close, LINEAR, 0.9, 0.2) == []  # a swap worth 0.2 is tolerated at 0.2


def test_a_swap_between_ranks_of_equal_weight_is_left_undecided_and_unplayed():
    flat = [1.0, 1.0, 0.0, 0.0, -1.0, -1.0]  # ranks 1-2, 3-4 and 5-6 count the same
    pairs = fits((5000, 100), (5050, 100), (3000, 100), (3050, 100), (1000, 100), (1050, 100))
    assert undecided(pairs, flat, 0.9, 0.1) == []
    assert undecided(pairs, LINEAR, 0.9, 0.1) == list(range(6))


def test_a_wider_confidence_or_a_smaller_tolerance_plays_more():
    near = fits((5000, 100), (5400, 100), (3000, 10), (2000, 10), (1000, 10), (0, 10))
    assert undecided(near, LINEAR, 0.9, 0.1) == []  # 400 apart, +/- 164 each at 90%
    assert undecided(near, LINEAR, 0.999, 0.1) == [0, 1]  # +/- 329 each at 99.9%
    assert undecided(near, LINEAR, 0.999, 0.2) == []  # a swap of ranks 1 and 2 is tolerated


def test_games_stop_at_max_and_the_last_batch_is_cut_to_fit():
    budget = AdaptiveGames(64, 100, 32, 0.9, 0.1)
    tied = [Fitness(5000, 500, 96), Fitness(5000, 500, 100), *fits(*[(-5000.0 * k, 1)
                                                                      for k in range(1, 5)])]
    assert budget.more(tied, LINEAR) == {0: 4}


def test_a_candidate_without_a_standard_error_is_undecided():
    lonely = fits((5000, math.inf), (4000, 1), (3000, 1), (2000, 1), (1000, 1), (0, 1))
    assert 0 in undecided(lonely, WEIGHTS, 0.9, 0.2)


def test_fixed_games_never_play_more():
    budget = FixedGames(384)
    assert (budget.first, budget.most, budget.to_config()) == (384, 384, 384)
    assert budget.more(fits(*[(1, 100)] * 6), WEIGHTS) == {}


def test_rank_weights_must_match_the_candidates():
    with pytest.raises(ValueError, match="5 rank weights for 6 candidates"):
        undecided(fits(*[(1, 1)] * 6), WEIGHTS[:5], 0.9, 0.2)


def undecided_plainly(fits, rank_weights, confidence, tolerance):
    """The rule as the module states it, every pair compared."""
    z = NormalDist().inv_cdf((1 + confidence) / 2)
    low = [f.value - z * f.stderr for f in fits]
    high = [f.value + z * f.stderr for f in fits]
    span = max(rank_weights) - min(rank_weights)
    found = []
    for i in range(len(fits)):
        better = sum(low[j] > high[i] for j in range(len(fits)) if j != i)
        worse = sum(high[j] < low[i] for j in range(len(fits)) if j != i)
        stake = rank_weights[better] - rank_weights[len(fits) - 1 - worse]
        if stake > tolerance * span or math.isnan(low[i]) or math.isnan(high[i]):
            found.append(i)
    return found


@pytest.mark.parametrize("seed", range(20))
def test_the_race_decides_as_the_rule_reads_with_ties_and_missing_errors(seed):
    rng = random.Random(seed)
    n = rng.choice([2, 5, 12, 40, 300])
    fits = [Fitness(float(rng.choice([1000, 1000, rng.gauss(1000, 80)])),
                    rng.choice([0.0, 30.0, rng.uniform(0, 60), math.nan]), 64)
            for _ in range(n)]
    weights = rank_weights(2, n)
    for confidence, tolerance in [(0.9, 0.1), (0.5, 0.0), (0.99, 0.3)]:
        assert undecided(fits, weights, confidence, tolerance) == undecided_plainly(
            fits, weights, confidence, tolerance)
