"""Seed 001's ``evalHeuristic`` (a Haskell expectimax), as a tune2048 family.

The document's heuristic is a weighted sum of six functions of the board, weights
``[1, 1, 1, 1, 0.25, 1000000]`` (a seventh weight, 90000, is dropped by its ``zipWith``)::

    log2(sum of tiles) + smoothness + monotonicity + log2(gradient) + 0.25 * finished
      + 1e6 * stay_alive

- ``sum``: the sum of the tile values; its log2 is a ``log2`` combiner over a table that holds half
  of each line's value sum (every tile is in one row and one column, so the eight lines add up to
  the board's sum exactly).
- ``smoothness``: the number of adjacent pairs, along rows and columns, with equal values, empty
  cells included (the document compares values, so two empty neighbours count).
- ``monotonicity``: the document folds a helper over the rows (left to right) and over the
  columns read bottom to top. Within a line it walks the pairs (a, b), (b, c), skipping pairs of
  two empty cells; while the pair does not rise it adds a running ``score`` to the total and
  increments ``score``; the first rising pair ends the line, and the last pair (c, d) is never
  looked at. *Our choice:* the document carries ``score`` from one line into the next (a fold over
  the whole board), which is not a sum over lines; we restart it at 0 on every line, so each line
  contributes what it would as the first line of the fold.
- ``gradient``: the sum of tile value x filter over the grid, with the filter
  ``[[0, 0, 0, 0], [128, 1, 0, 0], [512, 128, 1, 0], [2048, 512, 128, 1]]`` (big tiles in the
  bottom-left corner); its log2 is a ``log2`` combiner over four per-row tables. When the sum is
  0 the document's log2 is -infinity; ours is log2(1e-12) (the combiner floor).
- ``finished``: 100 when the largest tile is exactly 4096, 1 when it is exactly 2048, else 0: the
  ``top_tile`` board term with v(2048) = 1, v(4096) = 100.
- ``stay_alive``: -1 for a board with no legal move. The search already scores such a board 0,
  below every live board, whatever the weights, so the term cannot change a decision and is left
  out.

The defaults are the document's weights. The family is linear in its weights, so a tuning config
fixes one (``examples/families/seed001.yaml`` fixes ``sum_weight``).
"""

import itertools
from functools import cache

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
    row_values,
)

GRADIENT = ((0, 0, 0, 0), (128, 1, 0, 0), (512, 128, 1, 0), (2048, 512, 128, 1))
FINISHED = np.zeros(16)
FINISHED[11] = 1.0  # the largest tile is 2048
FINISHED[12] = 100.0  # the largest tile is 4096


def line_monotonicity(line: list[int]) -> float:
    """The document's monotonicity helper on one line of ranks, its score restarted at 0."""
    total = score = 0
    for first, second in itertools.pairwise(line[:3]):  # (a, b), (b, c): never (c, d)
        if first == second == 0:
            continue
        if first < second:
            break
        total += score
        score += 1
    return float(total)


def line_smoothness(line: list[int]) -> float:
    """Adjacent equal pairs in one line, empty cells included."""
    return float(sum(a == b for a, b in itertools.pairwise(line)))


@cache
def _weightless_tables():
    """Every line's half value sum, smoothness, row and column monotonicity, and the four rows'
    gradient sums: none depends on the weights, so they are built once."""
    ranks = row_ranks()
    values = row_values()
    smoothness = (ranks[:, 1:] == ranks[:, :-1]).sum(axis=1).astype(np.float64)
    monotonicity = np.array([line_monotonicity(line) for line in ranks.tolist()])
    # a column is looked up top cell first; the document reads it bottom to top
    reversed_line = (ranks[:, ::-1] << (4 * np.arange(4))).sum(axis=1)
    gradient = tuple(values @ np.array(row, dtype=np.float64) for row in GRADIENT)
    half_sum = values.sum(axis=1) / 2
    return half_sum, smoothness, monotonicity, monotonicity[reversed_line], gradient


class Seed001(Family):
    name = "seed001"
    summary = "seed 001's evalHeuristic: log2 sum, smoothness, monotonicity, log2 gradient, finished"
    params = (
        Param("sum_weight", 1.0, 0.0, 10.0, "weight of log2(sum of tile values)"),
        Param("smoothness_weight", 1.0, -10.0, 10.0, "weight of the count of equal neighbours"),
        Param("monotonicity_weight", 1.0, -10.0, 10.0, "weight of the document's monotonicity"),
        Param("gradient_weight", 1.0, 0.0, 10.0, "weight of log2(bottom-left gradient sum)"),
        Param("finished_weight", 0.25, 0.0, 10.0, "weight of 1 at 2048 and 100 at 4096"),
    )

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        sum_w, smooth_w, mono_w, gradient_w, finished_w = (float(w) for w in weights)
        half_sum, smoothness, rows_mono, columns_mono, gradient = _weightless_tables()
        return Heuristic((
            LineSum("shared", (half_sum,), "log2", sum_w),
            LineSum("rows_cols", (smooth_w * smoothness + mono_w * rows_mono,
                                  smooth_w * smoothness + mono_w * columns_mono)),
            LineSum("per_row", gradient, "log2", gradient_w),
            BoardTerm("top_tile", finished_w, FINISHED),
        ))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        sum_w, smooth_w, mono_w, gradient_w, finished_w = (float(w) for w in weights)
        rows, cols = grid_lines(ranks)
        values = [[2.0**r if r else 0.0 for r in row] for row in ranks]
        tile_sum = sum(map(sum, values))
        gradient = sum(GRADIENT[r][c] * values[r][c] for r in range(4) for c in range(4))
        top = max(map(max, ranks))
        finished = 100.0 if top == 12 else 1.0 if top == 11 else 0.0
        return (
            combine("log2", tile_sum, sum_w)
            + smooth_w * sum(line_smoothness(line) for line in rows + cols)
            + mono_w * sum(line_monotonicity(line) for line in rows)
            + mono_w * sum(line_monotonicity(line[::-1]) for line in cols)
            + combine("log2", gradient, gradient_w)
            + finished_w * finished
        )

