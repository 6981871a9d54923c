import math

import numpy as np
import pytest

from engine.depth import parse_depth
from engine.positions.sampling import PositionSampler, label_game, taken
from engine.rules import apply_move
from engine.solver import PlayerSpec, Solver


@pytest.fixture(scope="module")
def player():
    return Solver("classic", depth=0)


@pytest.fixture(scope="module")
def oracle():
    return Solver("classic", depth=1)


def test_which_positions_are_taken_depends_on_the_seed_alone():
    assert np.array_equal(taken(7, 500, 10), taken(7, 500, 10))
    longer = taken(7, 2000, 10)
    assert np.array_equal(longer[longer < 500], taken(7, 500, 10))  # not on the game's length
    assert not np.array_equal(taken(8, 2000, 10), longer)
    assert np.array_equal(taken(7, 50, 1), np.arange(50))


def test_a_position_is_taken_with_probability_one_in_every():
    count = len(taken(3, 200_000, 8))
    expected, sd = 200_000 / 8, math.sqrt(200_000 * (1 / 8) * (7 / 8))
    assert abs(count - expected) < 5 * sd  # fails by chance about once in 2 million


def test_a_labelled_game_is_the_players_game_and_its_positions_are_that_games(player, oracle):
    game = label_game(player, oracle, seed=11, every=4)
    played = player.play(11)
    assert (game.seed, game.score, game.max_tile, game.moves) == (
        played.seed, played.score, played.max_tile, played.moves)
    assert game.player_positions == played.moves_evaluated
    before = []  # every position of the game, replayed with the score then
    player.play(11, on_move=lambda board, move, score: before.append((board, move, score)))
    assert np.array_equal(game.move, taken(11, len(before), 4))
    for row, index in enumerate(game.move):
        board, move, score = before[index]
        assert (int(game.board[row]), int(game.score_before[row])) == (board, score)
        assert apply_move(board, move)[0] != board  # a position where a move was to be made


def test_each_position_is_labelled_with_the_oracles_value_of_every_move(player, oracle):
    game = label_game(player, oracle, seed=12, every=5)
    assert len(game.board) > 10
    for board, values in zip(game.board[:10], game.values[:10]):
        expected = oracle.move_values(int(board))
        assert [None if math.isnan(v) else v for v in values] == [expected[m] for m in
                                                                   sorted(expected)]
    assert game.oracle_positions == sum(oracle.decide(int(b)).positions for b in game.board)
    assert game.player_cpu > 0 and game.oracle_cpu > 0 and game.seconds > 0


def test_the_sampler_records_what_decides_its_games_and_is_sized_by_its_oracle():
    sampler = PositionSampler(PlayerSpec("classic", {"lost_penalty": 1.0}, 1),
                              PlayerSpec("snake", {}, parse_depth("auto:cap=4")), 10)
    assert sampler.depth == sampler.oracle.depth
    assert sampler.to_dict() == {
        "player": {"family": "classic", "weights": {"lost_penalty": 1.0}, "depth": 1,
                   "cutoff": sampler.player.cutoff},
        "oracle": {"family": "snake", "weights": {}, "depth": "auto:cap=4",
                   "cutoff": sampler.oracle.cutoff},
        "every": 10}
