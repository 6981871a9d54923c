"""Boards: the 64-bit encoding and conversions to and from 4x4 grids of tile values.

A board is a plain int (``Board``). Each cell holds a 4-bit rank: 0 is empty, r is the tile 2**r,
so tiles run from 2 (rank 1) to 32768 (rank 15). Cell (row, col) sits at bits 4*(4*row + col)::

    bit:   0    4    8   12 | 16   20   24   28 | 32 ...           | 48 ...       60
    cell: (0,0)(0,1)(0,2)(0,3)|(1,0)(1,1)(1,2)(1,3)|(2,0) ... (2,3) |(3,0) ... (3,3)

Row r is the 16-bit slice at bit 16*r, with column 0 in its lowest nibble. Rank 15 is a ceiling:
two 32768 tiles do not merge, because a 65536 tile would not fit in a nibble.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.errors import BadInput

Board = int

MAX_RANK = 15
MAX_TILE = 1 << MAX_RANK
BOARD_MASK = (1 << 64) - 1


class BoardError(BadInput):
    """A board given by a user is malformed; the message names the cell and the value."""


def tile_rank(value: int, where: str = "") -> int:
    """The rank of a tile value (0 for an empty cell); raise BoardError if it is no valid tile."""
    label = f" at {where}" if where else ""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BoardError(f"tile{label} must be an integer, got {value!r}")
    if value < 0:
        raise BoardError(f"tile{label} is negative: {value!r}")
    if value == 0:
        return 0
    if value & (value - 1) or value < 2 or value > MAX_TILE:
        raise BoardError(f"tile{label} must be 0 or a power of two from 2 to {MAX_TILE}, got {value!r}")
    return value.bit_length() - 1


def parse_board(grid: Sequence[Sequence[int]]) -> Board:
    """Encode a 4x4 grid of tile values (0 for empty) as a bitboard."""
    if isinstance(grid, (str, bytes)) or not isinstance(grid, Sequence) or len(grid) != 4:
        raise BoardError(f"a board must be 4 rows of 4 tiles, got {grid!r}")
    board = 0
    for row, cells in enumerate(grid):
        if isinstance(cells, (str, bytes)) or not isinstance(cells, Sequence) or len(cells) != 4:
            raise BoardError(f"row {row} must hold 4 tiles, got {cells!r}")
        for col, value in enumerate(cells):
            board |= tile_rank(value, f"cell ({row}, {col})") << (4 * (4 * row + col))
    return board


def board_to_grid(board: Board) -> list[list[int]]:
    """Decode a bitboard into a 4x4 grid of tile values (0 for empty)."""
    check_board(board)
    ranks = board_to_ranks(board)
    return [[(1 << r) if r else 0 for r in row] for row in ranks]


def board_to_ranks(board: Board) -> list[list[int]]:
    """Decode a bitboard into a 4x4 grid of ranks (0 for empty, r for the tile 2**r)."""
    return [[(board >> (4 * (4 * row + col))) & 0xF for col in range(4)] for row in range(4)]


def ranks_to_board(ranks: Sequence[Sequence[int]]) -> Board:
    """Encode a 4x4 grid of ranks (no validation beyond the nibble mask; for internal use)."""
    board = 0
    for row in range(4):
        for col in range(4):
            board |= (ranks[row][col] & 0xF) << (4 * (4 * row + col))
    return board


def check_board(board: Board) -> Board:
    """Return ``board`` if it is an int that fits in 64 bits, else raise BoardError."""
    if isinstance(board, bool) or not isinstance(board, int):
        raise BoardError(f"a bitboard must be an int, got {board!r}")
    if board < 0 or board > BOARD_MASK:
        raise BoardError(f"a bitboard must fit in 64 bits, got {board!r}")
    return board


def parse_board_text(text: str) -> Board:
    """Parse the command-line form ``"2 0 0 2 / 0 4 0 0 / ..."``: four rows split by '/'."""
    rows = [row.split() for row in text.split("/")]
    grid: list[list[int]] = []
    for row_index, row in enumerate(rows):
        cells = []
        for col_index, token in enumerate(row):
            try:
                cells.append(int(token))
            except ValueError:
                raise BoardError(
                    f"cell ({row_index}, {col_index}) is not an integer: {token!r}"
                ) from None
        grid.append(cells)
    return parse_board(grid)


def format_board_text(board: Board) -> str:
    """The command-line form of a board, ``"2 0 0 2 / 0 4 0 0 / ..."`` (``parse_board_text``'s
    inverse), so that a message can show a board the user can paste back."""
    return " / ".join(" ".join(str(v) for v in row) for row in board_to_grid(board))


def as_board(board: Board | Sequence[Sequence[int]]) -> Board:
    """Accept a bitboard or a 4x4 grid of tile values and return the bitboard."""
    if isinstance(board, np.integer):
        return check_board(int(board))
    if isinstance(board, int) and not isinstance(board, bool):
        return check_board(board)
    return parse_board(board)


def format_board(board: Board) -> str:
    """Render a board as four right-aligned rows, for the terminal."""
    grid = board_to_grid(board)
    return "\n".join(" ".join(f"{v if v else '.':>6}" for v in row) for row in grid)


def max_tile(board: Board) -> int:
    """The largest tile value on the board (0 for an empty board)."""
    top = max((board >> (4 * i)) & 0xF for i in range(16))
    return (1 << top) if top else 0


def count_empty(board: Board) -> int:
    """How many cells are empty."""
    return sum(1 for i in range(16) if not (board >> (4 * i)) & 0xF)


def distinct_tiles(board: Board) -> int:
    """How many different tile values the board holds (what ``depth: auto`` deepens with)."""
    return len({(board >> (4 * i)) & 0xF for i in range(16)} - {0})
