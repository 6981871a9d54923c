"""``ranked``: ``classic`` with a value curve per rank and separate weights for the edge lines.

Why this shape. ``classic`` prices every tile with two power laws (r ** ``sum_power`` in the sum
term, r ** ``monotonicity_power`` in the monotonicity term) and counts every merge alike, and it
scores the four edge lines like the four inner ones. Its tuned weights plateau at depth 1
(``runs/RESULTS.md``), and the positional terms that ``combined`` adds were switched off by
tuning: what a whole-board position term says, a line table can say better. So this family keeps
the classic form and frees exactly the two things a power law and a shared table fix:

- **per-rank curves.** Each of the three rank-valued terms gets a factor per rank, exp(c(r)),
  where c is piecewise linear in the rank through eight knots at the odd ranks 1, 3, ..., 15
  (tiles 2, 8, ..., 32768): c(r) is the knot's value for an odd r and the mean of the two knots
  around it for an even r. The sum term values a tile at r ** ``sum_power`` * exp(c_sum(r)), the
  monotonicity term at r ** ``monotonicity_power`` * exp(c_mono(r)), and a run of k equal tiles
  of rank r counts k * exp(c_merges(r)) merges (by the rank of the tiles merged, one below the
  rank the merge makes). Knots two ranks apart keep neighbouring ranks alike, which halves the
  dimension a free value per rank would need, and a factor, not a value, leaves the power law in
  charge of the scale across fifteen ranks.
- **edge lines.** Rows 0 and 3 and columns 0 and 3 hold the corner and the edges where a good
  player keeps its big tiles; four factors weigh their empty, merges, monotonicity and sum terms
  against the inner lines'. Every edge is treated alike, so the family keeps the board's eight
  symmetries and, like ``classic``, prefers no corner.

Per line of ranks r[0..3], with g = the edge factors on an edge line and 1 on an inner one::

    lost_penalty + g_empty * empty_weight * empty + g_merges * merges_weight * merges
      - g_mono * monotonicity_weight * min(mono_left, mono_right)
      - g_sum * sum_weight * sum(r[i] ** sum_power * exp(c_sum(r[i])))

(``classic``'s docstring defines empty, merges, mono_left and mono_right; here they use the
curved rank values.) With every knot at 0 and every edge factor at 1 this is ``classic`` exactly,
table for table, so a run can start from tuned classic weights: 7 classic weights, 4 edge factors
and 3 x 8 knots make 35 parameters.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from engine.families.base import Family, Param, grid_lines, rank_powers, row_empty, row_ranks
from engine.families.classic import CLASSIC, line_monotonicity
from engine.heuristic import Heuristic, LineSum

KNOT_RANKS = (1, 3, 5, 7, 9, 11, 13, 15)
CURVES = ("sum", "mono", "merges")
EDGE_TERMS = ("empty", "merges", "monotonicity", "sum")
EDGE_LINES = (0, 3)  # row and column indices of the edge lines

EDGE_PARAMS = tuple(
    Param(f"edge_{term}", 1.0, 0.01, 100.0, f"factor on the {term} term of the edge lines")
    for term in EDGE_TERMS
)
KNOT_PARAMS = tuple(
    Param(f"{curve}_log_r{rank}", 0.0, -5.0, 5.0,
          f"natural log of the {curve} term's factor at rank {rank} (tile {2 ** rank})")
    for curve in CURVES
    for rank in KNOT_RANKS
)


def knot_curve(knots) -> np.ndarray:
    """The factors exp(c(r)) for the ranks r = 0..15 from the eight knot values (c(0) = c(1)).

    Each factor comes from Python's ``math.exp`` so that the tables are the same on every CPU.
    """
    logs = [float(knots[0])]  # rank 0 is an empty cell: no term uses its factor
    for rank in range(1, 16):
        index, odd = divmod(rank - 1, 2)
        logs.append(float(knots[index]) if not odd else
                    (float(knots[index]) + float(knots[index + 1])) / 2)
    return np.array([math.exp(c) for c in logs])


@cache
def _runs() -> tuple[np.ndarray, ...]:
    """Every line's runs of equal non-empty tiles (empty cells skipped), at most two per line:
    (rank, length) of the first and of the second, rank 0 and length 0 where there is none."""
    ranks = row_ranks()
    found = [np.zeros(len(ranks), dtype=np.int64) for _ in range(4)]  # rank1, len1, rank2, len2
    prev = np.zeros(len(ranks), dtype=np.int64)
    run = np.zeros_like(prev)

    def close(ending: np.ndarray) -> None:
        first = ending & (found[1] == 0)
        second = ending & ~first
        for slot, where in ((0, first), (2, second)):
            found[slot] = np.where(where, prev, found[slot])
            found[slot + 1] = np.where(where, 1 + run, found[slot + 1])

    for i in range(4):
        rank = ranks[:, i]
        tile = rank != 0
        same = tile & (rank == prev)
        close(tile & ~same & (run > 0))
        run = np.where(same, run + 1, np.where(tile, 0, run))
        prev = np.where(tile, rank, prev)
    close(run > 0)
    return tuple(found)


def _line_table(classic: np.ndarray, curves: dict[str, np.ndarray], edge: np.ndarray) -> np.ndarray:
    """All 65536 lines' values for one line kind: ``edge`` holds its four term factors."""
    lost, mono_pow, mono_w, sum_pow, sum_w, merges_w, empty_w = classic
    g_empty, g_merges, g_mono, g_sum = edge
    ranks = row_ranks()
    rank1, len1, rank2, len2 = _runs()
    merge_factor = curves["merges"]
    merges = len1 * merge_factor[rank1] + len2 * merge_factor[rank2]
    return (
        lost
        + g_empty * empty_w * row_empty()
        + g_merges * merges_w * merges
        - g_mono * mono_w * line_monotonicity(rank_powers(mono_pow) * curves["mono"])
        - g_sum * sum_w * (rank_powers(sum_pow) * curves["sum"])[ranks].sum(axis=1)
    )


class Ranked(Family):
    name = "ranked"
    summary = "classic with per-rank value curves and edge-line factors (35 parameters)"
    params = CLASSIC.params + EDGE_PARAMS + KNOT_PARAMS

    def _parts(self, weights) -> tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]:
        """The weight vector as (classic weights, per-rank factor curves, edge factors)."""
        weights = np.asarray(weights, dtype=np.float64)
        classic, edge, knots = np.split(
            weights, [len(CLASSIC.params), len(CLASSIC.params) + len(EDGE_TERMS)])
        curves = {curve: knot_curve(knots[8 * i: 8 * i + 8]) for i, curve in enumerate(CURVES)}
        return classic, curves, edge

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        classic, curves, edge = self._parts(weights)
        edge_table = _line_table(classic, curves, edge)
        inner_table = _line_table(classic, curves, np.ones(len(EDGE_TERMS)))
        rows = tuple(edge_table if i in EDGE_LINES else inner_table for i in range(4))
        return Heuristic((LineSum("per_line", rows + rows),))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        classic, curves, edge = self._parts(weights)
        rows, cols = grid_lines(ranks)
        total = 0.0
        for index, line in list(enumerate(rows)) + list(enumerate(cols)):
            factors = edge if index in EDGE_LINES else np.ones(len(EDGE_TERMS))
            total += _line_reference(line, classic, curves, factors)
        return total


def _line_reference(line: list[int], classic, curves, factors) -> float:
    """One line's value, the plain way: walk the line once for each term."""
    lost, mono_pow, mono_w, sum_pow, sum_w, merges_w, empty_w = (float(w) for w in classic)
    g_empty, g_merges, g_mono, g_sum = (float(g) for g in factors)

    def mono_value(rank: int) -> float:
        return float(rank) ** mono_pow * curves["mono"][rank]

    mono_left = mono_right = 0.0
    for i in range(1, 4):
        step = mono_value(line[i - 1]) - mono_value(line[i])
        if line[i - 1] > line[i]:
            mono_left += step
        else:
            mono_right -= step
    merges = 0.0
    tiles = [rank for rank in line if rank]
    start = 0
    while start < len(tiles):
        end = start
        while end + 1 < len(tiles) and tiles[end + 1] == tiles[start]:
            end += 1
        if end > start:
            merges += (end - start + 1) * curves["merges"][tiles[start]]
        start = end + 1
    tile_sum = sum(float(r) ** sum_pow * curves["sum"][r] for r in line)
    return (
        lost
        + g_empty * empty_w * line.count(0)
        + g_merges * merges_w * merges
        - g_mono * mono_w * min(mono_left, mono_right)
        - g_sum * sum_w * tile_sum
    )


RANKED = Ranked()
