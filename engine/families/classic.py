"""``classic``: the widely used seven-parameter heuristic, summed over 4 rows and 4 columns.

Per line of ranks r[0..3]::

    lost_penalty + empty_weight * empty + merges_weight * merges
      - monotonicity_weight * min(mono_left, mono_right) - sum_weight * sum(r[i] ** sum_power)

``empty`` counts empty cells. ``merges`` walks the line's non-empty tiles in order and counts each
run of k >= 2 equal adjacent ranks as k (empty cells are skipped, so [2, 0, 2, 0] has a run of 2).
``mono_left`` sums r[i-1]**p - r[i]**p over neighbours that decrease left to right and
``mono_right`` sums r[i]**p - r[i-1]**p over the others (p = ``monotonicity_power``; empty cells
count as rank 0). One table serves all eight lines. The reference weights are the commonly quoted
CMA-ES result shipped as the baseline ``classic-reference``.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from engine.families.base import Family, Param, grid_lines, rank_powers, row_empty, row_ranks
from engine.heuristic import Heuristic, LineSum


def _merges(line: list[int]) -> int:
    merges = 0
    prev = 0
    run = 0
    for rank in line:
        if rank == 0:
            continue
        if rank == prev:
            run += 1
        elif run > 0:
            merges += 1 + run
            run = 0
        prev = rank
    if run > 0:
        merges += 1 + run
    return merges


@cache
def _static_features() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-row empty count, merge count (``_merges`` vectorised over all 65536 rows), and which
    neighbours decrease left to right: none of them depends on the weights."""
    ranks = row_ranks()
    prev = np.zeros(len(ranks), dtype=np.int64)
    run = np.zeros_like(prev)
    merges = np.zeros_like(prev)
    for i in range(4):
        rank = ranks[:, i]
        tile = rank != 0
        same = tile & (rank == prev)
        merges += np.where(tile & ~same & (run > 0), 1 + run, 0)
        run = np.where(same, run + 1, np.where(tile, 0, run))
        prev = np.where(tile, rank, prev)
    merges += np.where(run > 0, 1 + run, 0)
    decreasing = ranks[:, :-1] > ranks[:, 1:]
    return row_empty(), merges.astype(np.float64), decreasing


def line_monotonicity(rank_values: np.ndarray) -> np.ndarray:
    """min(mono_left, mono_right) of all 65536 lines for per-rank values v(0..15) (classic's
    r ** monotonicity_power; ``ranked`` bends them per rank)."""
    ranks = row_ranks()
    decreasing = _static_features()[2]
    values = rank_values[ranks]  # 16 values, looked up: cheap per candidate
    diff = values[:, :-1] - values[:, 1:]  # v(r[i-1]) - v(r[i])
    mono_left = np.where(decreasing, diff, 0.0).sum(axis=1)
    mono_right = np.where(decreasing, 0.0, -diff).sum(axis=1)
    return np.minimum(mono_left, mono_right)


def line_table(weights: np.ndarray) -> np.ndarray:
    """The classic value of all 65536 lines for the seven classic weights (also used by
    ``combined``, which adds positional terms to it)."""
    lost, mono_pow, mono_w, sum_pow, sum_w, merges_w, empty_w = weights
    ranks = row_ranks()
    empty, merges, _decreasing = _static_features()
    return (
        lost
        + empty_w * empty
        + merges_w * merges
        - mono_w * line_monotonicity(rank_powers(mono_pow))
        - sum_w * rank_powers(sum_pow)[ranks].sum(axis=1)
    )


def line_reference(line: list[int], weights: np.ndarray) -> float:
    """The classic value of one line of ranks, computed the plain way."""
    lost, mono_pow, mono_w, sum_pow, sum_w, merges_w, empty_w = (float(w) for w in weights)
    mono_left = mono_right = 0.0
    for i in range(1, 4):
        if line[i - 1] > line[i]:
            mono_left += line[i - 1] ** mono_pow - line[i] ** mono_pow
        else:
            mono_right += line[i] ** mono_pow - line[i - 1] ** mono_pow
    return (
        lost
        + empty_w * line.count(0)
        + merges_w * _merges(line)
        - mono_w * min(mono_left, mono_right)
        - sum_w * sum(float(r) ** sum_pow for r in line)
    )


class Classic(Family):
    name = "classic"
    summary = "lost penalty, empty cells, merges, monotonicity and tile-sum terms per line"
    params = (
        Param("lost_penalty", 200000.0, 0.0, 1e7, "constant per line; sets the weights' scale"),
        Param("monotonicity_power", 4.0, 0.5, 8.0, "exponent p applied to ranks in monotonicity"),
        Param("monotonicity_weight", 47.0, 0.0, 1e4, "penalty per unit of non-monotonicity"),
        Param("sum_power", 3.5, 0.5, 8.0, "exponent applied to ranks in the sum term"),
        Param("sum_weight", 11.0, 0.0, 1e4, "penalty per unit of rank ** sum_power"),
        Param("merges_weight", 700.0, 0.0, 1e5, "bonus per tile in a run of equal tiles"),
        Param("empty_weight", 270.0, 0.0, 1e5, "bonus per empty cell"),
    )

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        return Heuristic((LineSum("shared", (line_table(weights),)),))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        rows, cols = grid_lines(ranks)
        return sum(line_reference(line, weights) for line in rows + cols)


CLASSIC = Classic()
