import math

import numpy as np
import pytest

from engine.positions.objectives import OBJECTIVES, agreement, outcome_fit, regret
from engine.positions.sampling import LabelledGame, label_game
from engine.positions.set_file import PositionSet
from engine.solver import Solver

NAN = math.nan


class Chooses:
    """A stand-in player whose search picks the moves given, and whose heuristic gives the
    values given, position by position."""

    def __init__(self, moves=(), heuristic=()):
        self.moves = np.array(moves, dtype=np.int64)
        self.heuristic = np.array(heuristic, dtype=np.float64)

    def decide_many(self, boards):
        return self.moves[:len(boards)], 7 * len(boards)

    def evaluate_many(self, boards):
        return self.heuristic[:len(boards)]


def hand_set(games: list[dict]) -> PositionSet:
    """A set of games given as {values, score_before, score}: boards are made up (1, 2, ...)."""
    made, board = [], 0
    for seed, game in enumerate(games):
        count = len(game["values"])
        made.append(LabelledGame(
            seed=seed, score=game.get("score", 100), max_tile=64, moves=count, seconds=0.0,
            player_positions=0, oracle_positions=0, player_cpu=0.0, oracle_cpu=0.0,
            board=np.arange(board + 1, board + count + 1, dtype=np.uint64),
            move=np.arange(count, dtype=np.int64),
            score_before=np.array(game.get("score_before", [0] * count), dtype=np.int64),
            values=np.array(game["values"], dtype=np.float64)))
        board += count
    return PositionSet.from_games({}, 0, len(made), "test", made)


# Three positions of one game, and one with a single legal move, which no objective counts.
VALUES = [[10, 0, 5, NAN], [1, 1, NAN, NAN], [4, 8, NAN, NAN], [NAN, NAN, 3, NAN]]


def test_regret_is_the_value_lost_over_the_spread_summed_over_positions():
    score = regret(Chooses([2, 0, 0, 2]), hand_set([{"values": VALUES}]))
    # lost 5 of a spread of 10, nothing of 0 (a tie), 4 of 4: (5 + 0 + 4) / (10 + 0 + 4)
    assert score.value == pytest.approx(-9 / 14)
    assert (score.positions, score.games, score.evaluated) == (3, 1, 21)  # 3 searched, 7 each
    assert score.stderr == math.inf  # one game: no spread between games to measure


def test_agreement_counts_a_tie_for_the_best_as_agreeing():
    score = agreement(Chooses([0, 1, 0, 2]), hand_set([{"values": VALUES}]))
    assert score.value == pytest.approx(2 / 3)  # the best, a tie for the best, not the best


def test_errors_count_games_not_positions():
    """Two games: regret 1/2 in the first (one position), 0 in the second (two): the
    cluster-robust error of the ratio, by hand."""
    positions = hand_set([{"values": [[2, 0, NAN, NAN]]},
                          {"values": [[2, 0, NAN, NAN], [0, 4, NAN, NAN]]}])
    score = regret(Chooses([1, 0, 1]), positions)
    ratio = 2 / 8  # lost 2 (first game) + 0 + 0, of spreads 2 + 2 + 4
    residuals = [2 - ratio * 2, 0 - ratio * 6]
    expected = math.sqrt(sum(r * r for r in residuals) * 2 / 1) / 8
    assert score.value == pytest.approx(-ratio)
    assert score.stderr == pytest.approx(expected)
    assert score.games == 2


def outcome_set(to_come, before, games=4):
    """Positions of ``games`` games, ``before`` scored so far and ``to_come`` after."""
    per_game = len(to_come) // games
    return hand_set([
        {"values": [[1, 0, NAN, NAN]] * per_game,
         "score_before": before[g * per_game:(g + 1) * per_game],
         "score": 0}
        for g in range(games)]), np.array(to_come), np.array(before)


def test_outcome_fit_is_the_correlation_with_what_is_to_come_the_score_so_far_held_fixed():
    rng = np.random.default_rng(1)
    before = rng.integers(0, 50_000, 40)
    to_come = rng.integers(100, 80_000, 40)
    games = [{"values": [[1, 0, NAN, NAN]], "score_before": [b], "score": int(b + c)}
             for b, c in zip(before, to_come)]
    positions = hand_set(games)
    assert np.array_equal(positions.score_to_come, to_come)
    y = np.log1p(to_come)
    assert outcome_fit(Chooses(heuristic=3 * y + 5), positions).value == pytest.approx(1.0)
    assert outcome_fit(Chooses(heuristic=-y), positions).value == pytest.approx(-1.0)
    # what only follows the stage of the game explains nothing once the stage is held fixed
    stage_only = outcome_fit(Chooses(heuristic=2 * np.log1p(before)), positions)
    assert stage_only.value == pytest.approx(0.0, abs=1e-9)
    score = outcome_fit(Chooses(heuristic=y + rng.normal(0, 1, 40)), positions)
    assert 0 < score.value < 1 and 0 < score.stderr < 1
    assert (score.games, score.positions, score.evaluated) == (40, 40, 40)


@pytest.fixture(scope="module")
def sampled():
    player, oracle = Solver("classic", depth=0), Solver("classic", depth=1)
    games = [label_game(player, oracle, seed, 4) for seed in range(31, 36)]
    return PositionSet.from_games({}, 0, 5, "test", games), oracle


def test_the_oracle_itself_loses_nothing_and_always_agrees(sampled):
    positions, oracle = sampled
    assert regret(oracle, positions).value == 0.0
    assert agreement(oracle, positions).value == 1.0


def test_objectives_are_deterministic_and_rank_a_blind_player_below_the_oracle(sampled):
    positions, oracle = sampled
    blind = Solver("classic", dict(oracle.weights, monotonicity_weight=0, sum_weight=0,
                                   merges_weight=0, empty_weight=0), depth=1)
    for name, objective in OBJECTIVES.items():
        first, again = objective.score(blind, positions), objective.score(blind, positions)
        assert first == again, name
    assert regret(blind, positions).value < regret(oracle, positions).value
    assert agreement(blind, positions).value < 0.9


def test_games_scored_apart_combine_to_the_whole_sets_score(sampled):
    """What spreading a candidate's positions over CPUs relies on: any grouping of the games,
    in any order, gives the same value, error and counts."""
    positions, _oracle = sampled
    player = Solver("classic", depth=0)
    for name, objective in OBJECTIVES.items():
        whole = objective.score(player, positions)
        parts = [objective.per_game(player, positions, np.array(games))
                 for games in ([3, 0], [4], [1, 2])]
        apart = objective.combine([rows for rows, _ in parts], sum(n for _, n in parts))
        assert apart.value == pytest.approx(whole.value, rel=1e-9), name
        assert (apart.games, apart.positions, apart.evaluated) == (
            whole.games, whole.positions, whole.evaluated), name
        assert objective.score(player, positions, games=[4, 1]).games == 2
