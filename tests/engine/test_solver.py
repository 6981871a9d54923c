"""engine.solver: the Solver API and the games it plays."""

import math
from pathlib import Path

import pytest

from engine.board import board_to_grid, count_empty, max_tile, parse_board
from engine.families import FAMILIES
from engine.families.classic import CLASSIC
from engine.rules import Move, SpawnStream, apply_move, legal_moves, new_game
from engine.solver import DEFAULT_CUTOFF, MILESTONES, GameResult, Solver

REPO_ROOT = Path(__file__).resolve().parents[2]
CLASSIC_REFERENCE = REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml"

BOARD = [[2, 0, 0, 2], [0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 8]]
DEAD = [[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]]


def test_best_move_accepts_a_bitboard_or_a_grid():
    solver = Solver("classic", depth=1)
    board = parse_board(BOARD)
    assert solver.best_move(board) == solver.best_move(BOARD)
    assert solver.move_values(board) == solver.move_values(BOARD)
    assert solver.evaluate(board) == solver.evaluate(BOARD)
    assert isinstance(solver.best_move(board), Move)


def test_a_dead_board_has_no_best_move():
    solver = Solver("classic", depth=2)
    assert solver.best_move(DEAD) is None
    assert solver.move_values(DEAD) == dict.fromkeys(Move)


def test_illegal_moves_have_no_value():
    board = [[2, 4, 8, 16], [4, 8, 0, 0], [8, 0, 0, 0], [0, 0, 0, 0]]  # up and left do nothing
    values = Solver("snake", depth=1).move_values(board)
    assert values[Move.UP] is None and values[Move.LEFT] is None
    assert values[Move.DOWN] > 0 and values[Move.RIGHT] > 0


def test_bad_boards_are_rejected_at_the_boundary():
    solver = Solver("classic", depth=0)
    with pytest.raises(ValueError, match=r"cell \(0, 0\)"):
        solver.best_move([[3, 0, 0, 0], [0] * 4, [0] * 4, [0] * 4])
    with pytest.raises(ValueError):
        solver.best_move(-1)
    with pytest.raises(ValueError):
        solver.evaluate(2**64)


def test_weights_by_name_or_in_parameter_order_are_the_same_player():
    by_name = Solver("classic", CLASSIC.defaults(), depth=1)
    in_order = Solver("classic", list(CLASSIC.defaults().values()), depth=1)
    default = Solver("classic", depth=1)
    family_object = Solver(CLASSIC, depth=1)
    assert by_name.weights == in_order.weights == default.weights == family_object.weights
    assert by_name.move_values(BOARD) == in_order.move_values(BOARD)
    assert family_object.family is CLASSIC


@pytest.mark.parametrize("depth", [-1, 9, 1.0, True, "one", None, "auto:cap=2", "nodes:0"])
def test_bad_depth_is_rejected(depth):
    with pytest.raises(ValueError, match="depth"):
        Solver("classic", depth=depth)


@pytest.mark.parametrize("cutoff", [-0.1, 1.0, 2.0, math.nan])
def test_bad_cutoff_is_rejected(cutoff):
    with pytest.raises(ValueError, match="cutoff"):
        Solver("classic", cutoff=cutoff)


def test_bad_weights_are_rejected():
    defaults = CLASSIC.defaults()
    with pytest.raises(ValueError, match="sum_weight"):
        Solver("classic", {k: v for k, v in defaults.items() if k != "sum_weight"})
    with pytest.raises(ValueError, match="bogus"):
        Solver("classic", {**defaults, "bogus": 1.0})
    with pytest.raises(ValueError, match="empty_weight"):
        Solver("classic", {**defaults, "empty_weight": math.nan})
    with pytest.raises(ValueError):
        Solver("classic", [1.0, 2.0])  # too few values in parameter order
    with pytest.raises(ValueError, match="snaek"):
        Solver("snaek")


def test_defaults_and_repr():
    solver = Solver("features")
    assert solver.depth == 1
    assert solver.cutoff == DEFAULT_CUTOFF
    assert solver.family is FAMILIES["features"]
    assert repr(solver) == f"Solver('features', depth=1, cutoff={DEFAULT_CUTOFF})"


# --- from_file -------------------------------------------------------------------------------


def test_from_file_uses_the_recorded_depth():
    solver = Solver.from_file(CLASSIC_REFERENCE)
    assert solver.family is CLASSIC
    assert solver.depth == 2  # what the file records
    assert solver.weights == CLASSIC.defaults()


def test_from_file_depth_can_be_overridden():
    solver = Solver.from_file(CLASSIC_REFERENCE, depth=0, cutoff=0.0, transposition=False)
    assert solver.depth == 0
    assert solver.cutoff == 0.0
    assert solver.transposition is False
    assert solver.move_values(BOARD) == Solver("classic", depth=0).move_values(BOARD)


# --- games -----------------------------------------------------------------------------------


def test_play_returns_a_consistent_game_result():
    result = Solver("classic", depth=1).play(seed=3)
    assert isinstance(result, GameResult)
    assert result.seed == 3
    assert result.moves > 100
    assert result.score > 0
    assert result.seconds >= 0
    assert result.moves_evaluated > result.moves
    assert result.max_tile == max_tile(result.final_board)
    assert legal_moves(result.final_board) == []
    assert isinstance(result.score, int)
    assert isinstance(result.final_board, int)
    assert set(result.to_dict()) == {
        "seed",
        "score",
        "max_tile",
        "moves",
        "seconds",
        "moves_evaluated",
        "final_board",
    }


@pytest.mark.parametrize("top", [0, 2, 1024, 2048, 4096, 8192, 16384, 32768])
def test_milestones_follow_the_max_tile(top):
    result = GameResult(
        seed=0, score=0, max_tile=top, moves=0, seconds=0.0, moves_evaluated=0, final_board=0
    )
    assert list(result.milestones) == list(MILESTONES) == [2048, 4096, 8192, 16384, 32768]
    assert result.milestones == {tile: top >= tile for tile in MILESTONES}
    assert result.reached(top) or top == 0


def test_the_score_is_the_sum_of_the_points_of_the_moves_played():
    solver = Solver("classic", depth=0)
    seen = []

    def on_move(board, move, score):
        seen.append((board, move, score))

    result = solver.play(seed=21, on_move=on_move)
    total = 0
    for i, (board, move, score) in enumerate(seen):
        assert score == total, "on_move gets the score before the move"
        assert move in legal_moves(board)
        moved, points = apply_move(board, move)
        total += points
        after = seen[i + 1][0] if i + 1 < len(seen) else result.final_board
        # the next position is the moved board plus exactly one new 2 or 4 on an empty cell
        spawned = after ^ moved
        assert after & moved == moved
        assert count_empty(after) == count_empty(moved) - 1
        assert spawned >> (4 * ((spawned.bit_length() - 1) // 4)) in (1, 2)
    assert result.score == total
    assert seen[0][0] == new_game(SpawnStream(21))


@pytest.mark.parametrize(
    ("family", "depth", "max_moves"),
    [("classic", 0, None), ("snake", 0, None), ("features", 1, 150), ("classic", 2, 40)],
)
def test_the_stepwise_path_plays_the_same_game_as_the_compiled_path(family, depth, max_moves):
    solver = Solver(family, depth=depth)
    compiled = solver.play(seed=77, max_moves=max_moves)
    calls = []
    stepwise = solver.play(seed=77, max_moves=max_moves, on_move=lambda *a: calls.append(a))
    a, b = compiled.to_dict(), stepwise.to_dict()
    a.pop("seconds")
    b.pop("seconds")
    assert a == b
    assert len(calls) == stepwise.moves


def test_max_moves_limits_the_game():
    solver = Solver("classic", depth=0)
    assert solver.play(seed=5, max_moves=10).moves == 10
    opening = solver.play(seed=5, max_moves=0)
    assert opening.moves == 0
    assert opening.score == 0
    assert opening.final_board == new_game(SpawnStream(5))
    # a longer limit continues the same game
    short, full = solver.play(seed=5, max_moves=25), solver.play(seed=5)
    assert full.moves > 25
    calls = []
    solver.play(seed=5, max_moves=26, on_move=lambda board, *_: calls.append(board))
    assert calls[25] == short.final_board


def test_final_board_grid_is_valid():
    result = Solver("classic", depth=0).play(seed=9)
    grid = board_to_grid(result.final_board)
    assert max(max(row) for row in grid) == result.max_tile


def test_real_games_reach_the_milestones_they_report():
    # depth 2 with the reference weights reaches 2048 in most games; three seeds are plenty
    solver = Solver.from_file(CLASSIC_REFERENCE, depth=2)
    results = [solver.play(seed) for seed in range(3)]
    assert any(r.milestones[2048] for r in results)
    for r in results:
        assert r.milestones == {tile: max_tile(r.final_board) >= tile for tile in MILESTONES}
        assert r.score > r.max_tile  # making a tile of value v scores more than v along the way
