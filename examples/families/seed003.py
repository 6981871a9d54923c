"""Seed 003's heuristic (a Python expectimax notebook), as a tune2048 family.

The document scores a board as ``0.4 * m_val + log(max_corner) + corner_2 + smoothness``:

- ``m_val``: the ranks (log2 of the tiles, 0 for empty) weighted by a geometric sequence over the
  cells in row-major order, 2**16 for the top-left cell down to 2 for the bottom-right one, and
  divided by the number of tiles: a ``per_tile`` combiner over four per-row tables.
- ``max_corner``: when the largest tile sits at the top-left cell, its rank times 2**16, else 1;
  the document adds its natural log, so: ln(65536 * rank) at the corner, 0 elsewhere. This is the
  ``corner`` board term with v(rank) = ln(65536 * rank).
- ``corner_2``: 65536 * rank of the largest tile when it sits at the top-left cell, else 0: the
  ``corner`` board term with v(rank) = 65536 * rank.
- ``smoothness``: 1 / (the sum over rows and columns of |rank difference| between neighbours,
  empty = 0): a ``reciprocal`` combiner over one table for every line. *Our choice:* the document
  scores 0 when that sum is 0 (all sixteen cells equal); the combiner floor makes it 1e12 instead.
  No board the search evaluates (one just moved, so holding a tile and an empty cell) has a sum of
  0, so play is unchanged.

The document says its weights (0.4, 1, 1, 1) "were chosen arbitrarily"; they are the defaults, so
``tune family check`` and a tuning run start from the document's player.
"""

import itertools
import math

import numpy as np

from engine.families import (
    BoardTerm,
    Family,
    Heuristic,
    LineSum,
    Param,
    combine,
    grid_lines,
    row_ranks,
)

CORNER_SCALE = 65536.0  # the geometric sequence's first term, 2**16
RANKS = np.arange(16, dtype=np.float64)
# ln(65536 * rank), with Python's math (the same on every CPU); v(0) is never used
LOG_CORNER = np.array([math.log(CORNER_SCALE * r) if r else 0.0 for r in range(16)])


def cell_weight(row: int, col: int) -> float:
    """The geometric sequence at cell (row, col): 2**(16 - k) for row-major index k."""
    return 2.0 ** (16 - (4 * row + col))


class Seed003(Family):
    name = "seed003"
    summary = "seed 003: rank-weighted geometric order per tile, corner terms, 1 / smoothness"
    params = (
        Param("order_weight", 0.4, 0.0, 10.0, "weight of m_val, the per-tile geometric order"),
        Param("log_corner_weight", 1.0, 0.0, 1e5, "weight of ln(65536 * top rank) at the corner"),
        Param("corner_weight", 1.0, 0.0, 10.0, "weight of 65536 * top rank at the corner"),
        Param("smoothness_weight", 1.0, 0.0, 1e6, "weight of 1 / (sum of neighbour rank gaps)"),
    )

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        order_w, log_corner_w, corner_w, smooth_w = (float(w) for w in weights)
        ranks = row_ranks()
        gaps = np.abs(np.diff(ranks, axis=1)).sum(axis=1).astype(np.float64)
        order = tuple(ranks @ np.array([cell_weight(r, c) for c in range(4)]) for r in range(4))
        return Heuristic((
            LineSum("per_row", order, "per_tile", order_w),
            BoardTerm("corner", log_corner_w, LOG_CORNER),
            BoardTerm("corner", corner_w, CORNER_SCALE * RANKS),
            LineSum("shared", (gaps,), "reciprocal", smooth_w),
        ))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        order_w, log_corner_w, corner_w, smooth_w = (float(w) for w in weights)
        cells = [(r, c, ranks[r][c]) for r in range(4) for c in range(4)]
        tiles = sum(1 for _, _, k in cells if k)
        order = sum(cell_weight(r, c) * k for r, c, k in cells)
        top = max(k for _, _, k in cells)
        at_corner = tiles > 0 and ranks[0][0] == top
        rows, cols = grid_lines(ranks)
        gaps = sum(abs(a - b) for line in rows + cols for a, b in itertools.pairwise(line))
        return (
            combine("per_tile", order, order_w, tiles=tiles)
            + (log_corner_w * math.log(CORNER_SCALE * top) if at_corner else 0.0)
            + (corner_w * CORNER_SCALE * top if at_corner else 0.0)
            + combine("reciprocal", gaps, smooth_w)
        )
