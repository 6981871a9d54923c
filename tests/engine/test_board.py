"""engine.board: the bit layout, grid conversions and the errors users see for bad boards."""

import numpy as np
import pytest

from engine.board import (
    BOARD_MASK,
    BoardError,
    as_board,
    board_to_grid,
    board_to_ranks,
    check_board,
    count_empty,
    distinct_tiles,
    format_board,
    max_tile,
    parse_board,
    parse_board_text,
    ranks_to_board,
)


def test_board_error_is_a_value_error():
    assert issubclass(BoardError, ValueError)


@pytest.mark.parametrize("row", range(4))
@pytest.mark.parametrize("col", range(4))
def test_cell_row_col_sits_at_bits_4_times_4row_plus_col(row, col):
    for rank in (1, 7, 15):
        grid = [[0] * 4 for _ in range(4)]
        grid[row][col] = 2**rank
        assert parse_board(grid) == rank << (4 * (4 * row + col))


def test_row_is_the_16_bit_slice_with_column_0_lowest():
    board = parse_board([[2, 4, 8, 16], [0, 0, 0, 0], [0, 0, 0, 0], [32768, 0, 0, 2]])
    assert board & 0xFFFF == 0x4321
    assert (board >> 48) & 0xFFFF == 0x100F


def test_empty_grid_is_board_zero():
    assert parse_board([[0] * 4 for _ in range(4)]) == 0
    assert board_to_grid(0) == [[0] * 4 for _ in range(4)]


def test_grid_round_trip_on_random_grids():
    rng = np.random.default_rng(11)
    for _ in range(500):
        ranks = rng.integers(0, 16, size=(4, 4))
        ranks[rng.random((4, 4)) < rng.random()] = 0
        grid = [[int(2**r) if r else 0 for r in row] for row in ranks]
        board = parse_board(grid)
        assert board_to_grid(board) == grid
        assert board_to_ranks(board) == ranks.tolist()
        assert ranks_to_board(ranks.tolist()) == board


def test_bitboard_round_trip_on_random_64_bit_ints():
    rng = np.random.default_rng(12)
    boards = [int(x) for x in rng.integers(0, 2**64, size=1000, dtype=np.uint64)]
    for board in [0, BOARD_MASK, *boards]:
        assert parse_board(board_to_grid(board)) == board


@pytest.mark.parametrize(
    ("grid", "expected"),
    [
        ([[0] * 4] * 3, "4 rows"),  # three rows
        ([[0] * 4] * 5, "4 rows"),  # five rows
        ([[0] * 4, [0] * 5, [0] * 4, [0] * 4], "row 1"),  # a row of 5
        ([[0] * 4, [0] * 4, [0] * 3, [0] * 4], "row 2"),  # a row of 3
        ("2 0 0 2", "4 rows"),  # a string is not a grid
        (7, "4 rows"),
    ],
)
def test_wrong_shape_is_rejected(grid, expected):
    with pytest.raises(BoardError, match=expected):
        parse_board(grid)


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (3, (0, 1)),
        (65536, (3, 3)),
        (-2, (2, 0)),
        (1, (1, 2)),  # 1 is not a tile: tiles start at 2
        (6, (0, 0)),
        (2.0, (1, 1)),  # not an integer
        ("2", (2, 3)),
        (None, (3, 0)),
        (True, (0, 3)),  # bool is not a tile
    ],
)
def test_bad_tile_is_rejected_naming_the_cell_and_the_value(value, cell):
    grid = [[0, 2, 0, 0], [4, 0, 0, 0], [0, 0, 8, 0], [0, 0, 0, 16]]
    grid[cell[0]][cell[1]] = value
    with pytest.raises(BoardError) as info:
        parse_board(grid)
    message = str(info.value)
    assert f"cell ({cell[0]}, {cell[1]})" in message
    assert repr(value) in message


def test_parse_board_text():
    board = parse_board_text("2 0 0 2 / 0 4 0 0 / 0 0 0 0 / 0 0 0 8")
    assert board_to_grid(board) == [[2, 0, 0, 2], [0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 8]]
    # whitespace around the separators does not matter
    assert parse_board_text("2 0 0 2/0 4 0 0/0   0 0 0 /  0 0 0 8") == board


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2 0 0 2 / 0 4 0 0 / 0 0 0 0", "4 rows"),
        ("2 0 0 2 / 0 4 0 0 / 0 0 0 0 / 0 0 0 8 / 0 0 0 0", "4 rows"),
        ("2 0 0 / 0 4 0 0 / 0 0 0 0 / 0 0 0 8", "row 0"),
        ("2 0 0 2 / 0 4 0 0 / 0 0 0 0 0 / 0 0 0 8", "row 2"),
        ("2 0 x 2 / 0 4 0 0 / 0 0 0 0 / 0 0 0 8", r"cell \(0, 2\).*'x'"),
        ("2 0 0 2 / 0 4 0 0 / 0 0 1.5 0 / 0 0 0 8", r"cell \(2, 2\).*'1.5'"),
        ("2 0 0 2 / 0 4 0 0 / 0 0 0 0 / 0 0 0 3", r"cell \(3, 3\).*3"),
        ("", "4 rows"),
    ],
)
def test_parse_board_text_rejects_bad_text(text, expected):
    with pytest.raises(BoardError, match=expected):
        parse_board_text(text)


@pytest.mark.parametrize("bad", [-1, BOARD_MASK + 1, 2**70, 1.0, "0", True, None])
def test_check_board_rejects_what_is_no_64_bit_int(bad):
    with pytest.raises(BoardError) as info:
        check_board(bad)
    assert repr(bad) in str(info.value)


def test_as_board_accepts_a_bitboard_or_a_grid():
    grid = [[2, 0, 0, 2], [0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 8]]
    board = parse_board(grid)
    assert as_board(board) == board
    assert as_board(grid) == board
    assert as_board(tuple(tuple(row) for row in grid)) == board
    with pytest.raises(BoardError):
        as_board(-5)


def test_max_tile_count_empty_and_format():
    board = parse_board([[2, 0, 0, 2], [0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 32768]])
    assert max_tile(board) == 32768
    assert max_tile(0) == 0
    assert count_empty(board) == 12
    assert count_empty(0) == 16
    assert distinct_tiles(board) == 3 and distinct_tiles(0) == 0
    lines = format_board(board).splitlines()
    assert len(lines) == 4
    assert lines[0].split() == ["2", ".", ".", "2"]
    assert lines[3].split() == [".", ".", ".", "32768"]


def test_distinct_tiles_counts_as_the_compiled_search_does():
    from engine import kernels

    rng = np.random.default_rng(7)
    for board in rng.integers(0, 2**64, size=200, dtype=np.uint64):
        assert distinct_tiles(int(board)) == kernels.distinct_tiles(board)
