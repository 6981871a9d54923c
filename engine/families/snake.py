"""``snake``: tile values weighted along a boustrophedon path from the top-left corner.

The path (the design documents' "snake", seeds 000 and 002) visits row 0 left to right, row 1 right
to left, row 2 left to right and row 3 right to left; cell k of the path weighs ``decay ** k``, so
the head at (0, 0) weighs 1, which also fixes the weights' scale (no redundant direction for
CMA-ES). The heuristic is::

    sum_k decay**k * v(cell_k) + empty_weight * empty - head_penalty * (v(max) - v(head))**2

where v(tile) = tile ** tile_power (v(empty) = 0) and the last term applies only when the head is
not the largest tile (seed 000's corner penalty). We weight tile *values*, not ranks, because that
is what both documents do: a value-weighted snake prefers merging the big tiles, which is the point
of the shape; ``tile_power`` lets the tuner bend values toward ranks (small powers) when that plays
better. Seed 000's heuristic is decay 0.1, power 1, penalty 1, no empty term; seed 002's snake
matrix is decay 1/4 with no penalty.
"""

from __future__ import annotations

import math

import numpy as np

from engine.families.base import Family, Param, row_empty, row_ranks
from engine.heuristic import BoardTerm, Heuristic, LineSum


def path_index(row: int, col: int) -> int:
    """Position of cell (row, col) along the snake path (0 = head at the top-left corner)."""
    return 4 * row + (col if row % 2 == 0 else 3 - col)


def tile_values(tile_power: float) -> np.ndarray:
    """v(rank) for ranks 0..15: 0 for empty, (2**rank) ** tile_power otherwise (``math.pow``,
    the same on every CPU; see ``engine.families.base.rank_powers``)."""
    return np.array([math.pow(2.0**r, tile_power) if r else 0.0 for r in range(16)])


class Snake(Family):
    name = "snake"
    summary = "value-weighted snake path from the top-left corner, corner penalty, empty cells"
    params = (
        Param("decay", 0.25, 0.01, 1.0, "ratio between consecutive path weights (head = 1)"),
        Param("tile_power", 1.0, 0.1, 3.0, "cells count tile ** tile_power"),
        Param("head_penalty", 1.0, 0.0, 1e3, "weight of (v(max) - v(head))**2 when max is off the head"),
        Param("empty_weight", 0.0, 0.0, 1e5, "bonus per empty cell, in units of v"),
    )

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        decay, tile_power, head_penalty, empty_weight = (float(w) for w in weights)
        values = tile_values(tile_power)
        cell_values = values[row_ranks()]
        rows = []
        for r in range(4):
            path_weights = np.array([decay ** path_index(r, c) for c in range(4)])
            rows.append(cell_values @ path_weights + empty_weight * row_empty())
        return Heuristic((
            LineSum("per_row", tuple(rows)),
            BoardTerm("head_penalty", head_penalty, values),
        ))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        decay, tile_power, head_penalty, empty_weight = (float(w) for w in weights)

        def v(rank: int) -> float:
            return (2.0**rank) ** tile_power if rank else 0.0

        total = 0.0
        for r in range(4):
            for c in range(4):
                total += decay ** path_index(r, c) * v(ranks[r][c])
                total += empty_weight * (ranks[r][c] == 0)
        top = max(max(row) for row in ranks)
        head = ranks[0][0]
        if head != top:
            total -= head_penalty * (v(top) - v(head)) ** 2
        return total


SNAKE = Snake()
