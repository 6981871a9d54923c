"""``features``: a weighted sum of the board features named in the design documents.

Each parameter is the weight of one feature; a board's value is the sum of weight x feature. Ranks
are r (0 empty), tile values are v = 2**r (0 empty); "lines" are the 4 rows and the 4 columns and
"adjacent pairs" are the 24 horizontally or vertically neighbouring cell pairs.

- ``empty``: number of empty cells (seeds 001, 002).
- ``pairs``: adjacent pairs of equal non-empty tiles, the potential merges (seed 002 "pmerge",
  seed 004 "adjacent cells").
- ``monotonicity``: minus the sum over lines of min(total rise, total fall) of the ranks along
  the line (empty = 0): 0 when every line is monotone, more negative the less it is (seeds 001, 003).
- ``smoothness``: minus the sum of |r_a - r_b| over adjacent pairs of non-empty tiles (seed 003).
- ``sum``: sum of tile values (seed 001).
- ``sum_squares``: sum of squared tile values, seed 002's "big numbers".
- ``unbalance``: sum of |v_a - v_b| over adjacent pairs, empty = 0 (seed 002).
- ``gradient``: sum of G[row][col] * v with seed 004's corner matrix
  G = [[10, 9, 8, 7], [9, 5, 4, 3], [8, 4, 2, 2], [7, 3, 2, 1]].
- ``snake``: sum of 4**-k * v along the snake path of ``engine.families.snake`` (seed 002's snake
  matrix 4**(15-k), scaled so that the head weighs 1).
- ``average``: mean value of the non-empty tiles (seed 004).
- ``monotonic_lines``: number of lines whose ranks (empty = 0) never rise or never fall (seed 002).
- ``corner``: the largest tile's rank when it sits at the top-left corner, else 0 (seeds 000, 003).

The family is linear, so multiplying every weight by one positive number changes no decision;
tuning configs fix ``empty`` to remove that redundant direction.
"""

from __future__ import annotations

import itertools
from functools import cache

import numpy as np

from engine.families.base import (
    Family,
    Param,
    grid_lines,
    row_empty,
    row_ranks,
    row_values,
)
from engine.families.snake import path_index
from engine.heuristic import BoardTerm, Heuristic, LineSum

GRADIENT = ((10, 9, 8, 7), (9, 5, 4, 3), (8, 4, 2, 2), (7, 3, 2, 1))

LINE_FEATURES = ("pairs", "monotonicity", "smoothness", "unbalance", "monotonic_lines")


def _line_features(line: list[int]) -> dict[str, float]:
    """Features of one line of ranks that the board's rows and columns both contribute."""
    values = [2.0**r if r else 0.0 for r in line]
    rise = sum(max(b - a, 0) for a, b in itertools.pairwise(line))
    fall = sum(max(a - b, 0) for a, b in itertools.pairwise(line))
    return {
        "pairs": sum(1.0 for a, b in itertools.pairwise(line) if a and a == b),
        "monotonicity": -float(min(rise, fall)),
        "smoothness": -float(sum(abs(a - b) for a, b in itertools.pairwise(line) if a and b)),
        "unbalance": sum(abs(a - b) for a, b in itertools.pairwise(values)),
        "monotonic_lines": 1.0 if rise == 0 or fall == 0 else 0.0,
    }


@cache
def _static_line_features() -> dict[str, np.ndarray]:
    """Per-row values of the line features, for all 65536 rows (weight-independent)."""
    ranks = row_ranks()
    values = row_values()
    step = np.diff(ranks, axis=1)
    rise = np.clip(step, 0, None).sum(axis=1)
    fall = np.clip(-step, 0, None).sum(axis=1)
    both = (ranks[:, 1:] > 0) & (ranks[:, :-1] > 0)
    return {
        "pairs": ((ranks[:, 1:] == ranks[:, :-1]) & both).sum(axis=1).astype(np.float64),
        "monotonicity": -np.minimum(rise, fall).astype(np.float64),
        "smoothness": -np.where(both, np.abs(step), 0).sum(axis=1).astype(np.float64),
        "unbalance": np.abs(np.diff(values, axis=1)).sum(axis=1),
        "monotonic_lines": ((rise == 0) | (fall == 0)).astype(np.float64),
    }


class Features(Family):
    name = "features"
    summary = "linear combination of twelve board features from the design documents"
    params = (
        Param("empty", 1.0, 0.0, 1e3, "weight of the empty-cell count (fix it: sets the scale)"),
        Param("pairs", 1.0, -1e3, 1e3, "weight of adjacent equal pairs"),
        Param("monotonicity", 1.0, -1e3, 1e3, "weight of minus the lines' non-monotonicity"),
        Param("smoothness", 0.1, -1e3, 1e3, "weight of minus the rank gaps of neighbours"),
        Param("sum", 0.0, -1.0, 1.0, "weight of the sum of tile values"),
        Param("sum_squares", 0.0, -1e-3, 1e-3, "weight of the sum of squared tile values"),
        Param("unbalance", 0.0, -1.0, 1.0, "weight of the value gaps of neighbours"),
        Param("gradient", 0.0, -1.0, 1.0, "weight of the corner-gradient matrix sum"),
        Param("snake", 0.0, -10.0, 10.0, "weight of the 4**-k snake path sum"),
        Param("average", 0.0, -1.0, 1.0, "weight of the mean non-empty tile value"),
        Param("monotonic_lines", 0.5, -1e3, 1e3, "weight of the count of monotonic lines"),
        Param("corner", 0.5, -1e3, 1e3, "weight of the top rank when it sits in the corner"),
    )

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        w = self.named(weights)
        values = row_values()
        line = _static_line_features()
        shared = sum(w[name] * line[name] for name in LINE_FEATURES)
        per_row_static = (
            shared
            + w["empty"] * row_empty()
            + w["sum"] * values.sum(axis=1)
            + w["sum_squares"] * (values**2).sum(axis=1)
        )
        rows = []
        for r in range(4):
            grad = np.array(GRADIENT[r], dtype=np.float64)
            snake = np.array([4.0 ** -path_index(r, c) for c in range(4)])
            rows.append(per_row_static + values @ (w["gradient"] * grad + w["snake"] * snake))
        col = np.asarray(shared, dtype=np.float64)
        return Heuristic((
            LineSum("per_line", tuple(rows) + (col,) * 4),
            BoardTerm("mean_tile", w["average"]),
            BoardTerm("corner", w["corner"]),
        ))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        return sum(w * f for w, f in zip(weights, self.feature_values(ranks)))

    def feature_values(self, ranks: list[list[int]]) -> list[float]:
        """Every feature of a grid of ranks, in parameter order (the plain definitions)."""
        rows, cols = grid_lines(ranks)
        cells = [(r, c, ranks[r][c]) for r in range(4) for c in range(4)]
        values = {(r, c): (2.0**k if k else 0.0) for r, c, k in cells}
        totals = dict.fromkeys(LINE_FEATURES, 0.0)
        for line in rows + cols:
            for name, value in _line_features(line).items():
                totals[name] += value
        tiles = [v for v in values.values() if v]
        top = max(k for _, _, k in cells)
        return [
            float(sum(1 for _, _, k in cells if k == 0)),
            totals["pairs"],
            totals["monotonicity"],
            totals["smoothness"],
            sum(tiles),
            sum(v * v for v in tiles),
            totals["unbalance"],
            sum(GRADIENT[r][c] * values[r, c] for r, c, _ in cells),
            sum(4.0 ** -path_index(r, c) * values[r, c] for r, c, _ in cells),
            sum(tiles) / len(tiles) if tiles else 0.0,
            totals["monotonic_lines"],
            float(top) if ranks[0][0] == top else 0.0,
        ]


FEATURES = Features()
