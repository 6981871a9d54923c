"""engine.rules (and the move kernels under it): one test per rule of the game, plus golden moves."""

import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from engine import kernels
from engine.board import board_to_grid, board_to_ranks, parse_board, ranks_to_board
from engine.rules import Move, SpawnStream, apply_move, is_game_over, legal_moves, new_game
from engine.solver import Solver

REPO_ROOT = Path(__file__).resolve().parents[2]
MOVES_TSV = REPO_ROOT / "tests" / "data" / "moves.tsv"


def grid_with_row(row: int, line: list[int]) -> list[list[int]]:
    grid = [[0] * 4 for _ in range(4)]
    grid[row] = list(line)
    return grid


def grid_with_col(col: int, line: list[int]) -> list[list[int]]:
    """A grid whose column ``col`` holds ``line`` from top to bottom."""
    grid = [[0] * 4 for _ in range(4)]
    for row in range(4):
        grid[row][col] = line[row]
    return grid


def slide_left_reference(ranks: list[int]) -> tuple[list[int], int]:
    """The rule written the obvious way: drop empties, merge equal neighbours once, left first."""
    tiles = [r for r in ranks if r]
    out: list[int] = []
    score = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1] and tiles[i] < 15:
            out.append(tiles[i] + 1)
            score += 2 ** (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (4 - len(out)), score


# --- moves on single lines -------------------------------------------------------------------

LEFT_CASES = [
    ([2, 2, 2, 2], [4, 4, 0, 0]),
    ([2, 2, 4, 0], [4, 4, 0, 0]),
    ([4, 4, 8, 0], [8, 8, 0, 0]),
    ([2, 0, 2, 4], [4, 4, 0, 0]),
    ([8, 4, 4, 0], [8, 8, 0, 0]),
    ([0, 0, 0, 2], [2, 0, 0, 0]),
]
# moving right is moving left in a mirror
RIGHT_CASES = [([2, 2, 2, 0], [0, 0, 2, 4])] + [(a[::-1], b[::-1]) for a, b in LEFT_CASES]


@pytest.mark.parametrize("row", range(4))
@pytest.mark.parametrize(("line", "expected"), LEFT_CASES)
def test_move_left(line, expected, row):
    after, _ = apply_move(parse_board(grid_with_row(row, line)), Move.LEFT)
    assert board_to_grid(after) == grid_with_row(row, expected)


@pytest.mark.parametrize("row", range(4))
@pytest.mark.parametrize(("line", "expected"), RIGHT_CASES)
def test_move_right(line, expected, row):
    after, _ = apply_move(parse_board(grid_with_row(row, line)), Move.RIGHT)
    assert board_to_grid(after) == grid_with_row(row, expected)


@pytest.mark.parametrize("col", range(4))
@pytest.mark.parametrize(("line", "expected"), LEFT_CASES)
def test_move_up_works_on_columns_like_left(line, expected, col):
    after, _ = apply_move(parse_board(grid_with_col(col, line)), Move.UP)
    assert board_to_grid(after) == grid_with_col(col, expected)


@pytest.mark.parametrize("col", range(4))
@pytest.mark.parametrize(("line", "expected"), RIGHT_CASES)
def test_move_down_works_on_columns_like_right(line, expected, col):
    after, _ = apply_move(parse_board(grid_with_col(col, line)), Move.DOWN)
    assert board_to_grid(after) == grid_with_col(col, expected)


@pytest.mark.parametrize("move", list(Move))
def test_every_line_moves_as_the_reference_rule_says(move):
    """All 65536 lines, in a different row or column for each direction, against the plain rule."""
    position = int(move)  # up: column 0, down: column 1, left: row 2, right: row 3
    horizontal = move in (Move.LEFT, Move.RIGHT)
    backwards = move in (Move.RIGHT, Move.DOWN)
    mismatches = []
    for code in range(65536):
        line = [(code >> (4 * i)) & 0xF for i in range(4)]
        grid = [[0] * 4 for _ in range(4)]
        for i, rank in enumerate(line):
            if horizontal:
                grid[position][i] = rank
            else:
                grid[i][position] = rank
        moved, score = apply_move(ranks_to_board(grid), move)
        ranks = board_to_ranks(moved)
        got = ranks[position] if horizontal else [ranks[i][position] for i in range(4)]
        if backwards:
            expected, expected_score = slide_left_reference(line[::-1])
            expected = expected[::-1]
        else:
            expected, expected_score = slide_left_reference(line)
        if got != expected or score != expected_score:
            mismatches.append((line, got, score, expected, expected_score))
    assert mismatches == []


def test_two_32768_tiles_do_not_merge():
    board = parse_board(grid_with_row(0, [32768, 32768, 0, 0]))
    assert apply_move(board, Move.LEFT) == (board, 0)
    right, score = apply_move(board, Move.RIGHT)
    assert board_to_grid(right) == grid_with_row(0, [0, 0, 32768, 32768])
    assert score == 0
    column = parse_board(grid_with_col(2, [32768, 32768, 32768, 32768]))
    assert apply_move(column, Move.UP) == (column, 0)
    assert apply_move(column, Move.DOWN) == (column, 0)


def test_two_16384_tiles_merge_into_32768():
    after, score = apply_move(parse_board(grid_with_row(1, [0, 16384, 0, 16384])), Move.LEFT)
    assert board_to_grid(after) == grid_with_row(1, [32768, 0, 0, 0])
    assert score == 32768


def test_a_move_that_changes_nothing_is_illegal():
    # everything is already packed to the top-left and nothing can merge up or left
    board = parse_board([[2, 4, 8, 16], [4, 8, 0, 0], [8, 0, 0, 0], [0, 0, 0, 0]])
    assert apply_move(board, Move.UP) == (board, 0)
    assert apply_move(board, Move.LEFT) == (board, 0)
    assert legal_moves(board) == [Move.DOWN, Move.RIGHT]
    assert not is_game_over(board)


def test_a_full_board_without_merges_has_no_legal_move():
    board = parse_board([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]])
    assert legal_moves(board) == []
    assert is_game_over(board)
    for move in Move:
        assert apply_move(board, move) == (board, 0)


def test_a_full_board_with_one_merge_is_not_over():
    board = parse_board([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 8, 8]])
    assert legal_moves(board) == [Move.LEFT, Move.RIGHT]


@pytest.mark.parametrize(
    ("line", "points"),
    [
        ([2, 2, 4, 4], 4 + 8),
        ([2, 2, 2, 2], 4 + 4),
        ([4, 4, 8, 0], 8),  # the new 8 does not merge again with the old 8
        ([2, 4, 8, 16], 0),
        ([0, 0, 0, 2], 0),  # a slide alone scores nothing
        ([1024, 1024, 2048, 2048], 2048 + 4096),
    ],
)
def test_score_is_the_sum_of_the_merged_tiles(line, points):
    assert apply_move(parse_board(grid_with_row(0, line)), Move.LEFT)[1] == points
    # several lines add up
    board = parse_board([line, line, [0] * 4, line])
    assert apply_move(board, Move.LEFT)[1] == 3 * points


def test_move_numbers_match_the_kernels():
    board = parse_board([[2, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert [int(m) for m in Move] == [0, 1, 2, 3]
    assert [str(m) for m in Move] == ["up", "down", "left", "right"]
    assert board_to_grid(apply_move(board, Move.DOWN)[0])[3] == [2, 2, 0, 0]
    assert board_to_grid(apply_move(board, Move.RIGHT)[0])[0] == [0, 0, 0, 4]


# --- golden moves ----------------------------------------------------------------------------


def read_moves_tsv():
    rows = []
    for line in MOVES_TSV.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        rows.append(line.split("\t"))
    return rows


def test_golden_moves_file_is_complete():
    rows = read_moves_tsv()
    assert len(rows) == 1204
    assert all(len(row) == 9 for row in rows)


def test_every_golden_move_and_score_is_reproduced():
    mismatches = []
    for row in read_moves_tsv():
        board = int(row[0], 16)
        for move in Move:
            expected = row[1 + 2 * move]
            expected_board = board if expected == "-" else int(expected, 16)
            expected_score = int(row[2 + 2 * move])
            # through the kernels directly, with numpy boards ...
            b = np.uint64(board)
            kernel_board = int(kernels.execute_move(b, int(move)))
            kernel_score = kernels.move_score(b, int(move))
            # ... and through the Python API
            api = apply_move(board, move)
            if (
                kernel_board != expected_board
                or kernel_score != expected_score
                or api != (expected_board, expected_score)
            ):
                mismatches.append((row[0], str(move), api, expected_board, expected_score))
            if (expected == "-") != (move not in legal_moves(board)):
                mismatches.append((row[0], str(move), "legality"))
    assert mismatches == []


# --- spawns ----------------------------------------------------------------------------------


def test_spawns_are_a_4_about_one_time_in_ten():
    stream = SpawnStream(2024)
    n = 40_000
    fours = 0
    for _ in range(n):
        board = stream.spawn(0)
        shift = 4 * ((board.bit_length() - 1) // 4)  # the nibble of the highest set bit
        rank = board >> shift
        assert rank in (1, 2)
        assert board == rank << shift, "one tile, nothing else"
        fours += rank == 2
    # binomial(n, 0.1): standard deviation sqrt(0.09 / n) = 0.0015; allow 5 of them
    assert abs(fours / n - 0.1) < 5 * math.sqrt(0.1 * 0.9 / n)


def chi_square(counts: Counter, cells: list, n: int) -> float:
    expected = n / len(cells)
    return sum((counts[c] - expected) ** 2 / expected for c in cells)


def test_spawn_cells_are_uniform_on_an_empty_board():
    stream = SpawnStream(7)
    n = 32_000
    counts: Counter = Counter()
    for _ in range(n):
        board = stream.spawn(0)
        counts[next(i for i in range(16) if (board >> (4 * i)) & 0xF)] += 1
    # chi-square with 15 degrees of freedom: P(X > 50) is about 1e-5
    assert chi_square(counts, list(range(16)), n) < 50


def test_spawns_land_only_and_uniformly_on_empty_cells():
    board = parse_board([[2, 0, 4, 8], [0, 16, 0, 2], [4, 2, 8, 0], [2, 0, 4, 2]])
    empty = [i for i in range(16) if not (board >> (4 * i)) & 0xF]
    assert len(empty) == 5
    stream = SpawnStream(99)
    n = 20_000
    counts: Counter = Counter()
    for _ in range(n):
        spawned = stream.spawn(board)
        diff = spawned ^ board
        changed = [i for i in range(16) if (diff >> (4 * i)) & 0xF]
        assert len(changed) == 1, "exactly one cell changes"
        assert changed[0] in empty, "and it was empty"
        assert (spawned >> (4 * changed[0])) & 0xF in (1, 2)
        counts[changed[0]] += 1
    # chi-square with 4 degrees of freedom: P(X > 30) is about 5e-6
    assert chi_square(counts, empty, n) < 30


def test_spawn_on_a_full_board_changes_nothing():
    board = parse_board([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]])
    assert SpawnStream(3).spawn(board) == board


def test_a_spawn_stream_is_a_function_of_its_seed():
    a, b, c = SpawnStream(5), SpawnStream(5), SpawnStream(6)
    seq_a = [a.spawn(0) for _ in range(50)]
    seq_b = [b.spawn(0) for _ in range(50)]
    seq_c = [c.spawn(0) for _ in range(50)]
    assert seq_a == seq_b
    assert seq_a != seq_c


def test_a_new_game_has_exactly_two_tiles():
    boards = set()
    for seed in range(300):
        board = new_game(SpawnStream(seed))
        ranks = [r for row in board_to_ranks(board) for r in row if r]
        assert len(ranks) == 2
        assert all(r in (1, 2) for r in ranks)
        boards.add(board)
    assert len(boards) > 50  # different seeds open differently


# --- whole games -----------------------------------------------------------------------------


@pytest.mark.parametrize(("family", "depth"), [("classic", 0), ("classic", 1), ("snake", 0)])
def test_a_game_ends_only_when_no_move_is_legal(family, depth):
    result = Solver(family, depth=depth).play(seed=17)
    assert result.moves > 0
    assert legal_moves(result.final_board) == []


def test_the_same_seed_gives_the_same_game():
    first = Solver("classic", depth=1).play(seed=1234, max_moves=300)
    second = Solver("classic", depth=1).play(seed=1234, max_moves=300)
    a, b = first.to_dict(), second.to_dict()
    a.pop("seconds")
    b.pop("seconds")
    assert a == b


@pytest.mark.subprocess
def test_the_same_seed_gives_the_same_game_in_a_fresh_process():
    here = Solver("classic", depth=1).play(seed=4321, max_moves=300)
    code = (
        "from engine import Solver\n"
        "r = Solver('classic', depth=1).play(seed=4321, max_moves=300)\n"
        "print(r.score, r.moves, r.final_board)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(here.score), str(here.moves), str(here.final_board)]


def test_different_seeds_give_different_games():
    solver = Solver("classic", depth=0)
    games = {(r.score, r.moves, r.final_board) for r in (solver.play(seed=s) for s in range(8))}
    assert len(games) == 8
