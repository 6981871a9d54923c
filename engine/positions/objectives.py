"""What a candidate's weights are worth on a position set, without playing a game: each
objective scores one player (a ``Solver`` at the tuning policy) on labelled positions.

- ``regret``: the oracle's value lost by the move the player's search picks, summed over the
  positions and divided by the sum of each position's spread (its best legal move's value less
  its worst's). One ratio over the set, not a mean of per-position ratios: a position where
  every move is worth about the same (a small spread) then counts little, where a per-position
  ratio would blow its noise up, and a decisive position (a large spread, where games are won
  or lost) counts as much as it can lose. The oracle's scale cancels. Reported negated, so that
  higher is better, as every fitness is.
- ``agreement``: the share of positions where the player picks a move the oracle values best.
- ``outcome_fit``: Texel tuning's idea, fitting the heuristic itself (no search) to how games
  went: the partial correlation between the heuristic's value of a position and the log of the
  points its game scored after it, the log of the points scored before it held fixed. The log,
  because what remains of a game grows about exponentially with how long a player survives; the
  score so far held fixed, because late positions have both larger heuristic values and less to
  come, a trend of the stage of the game and not of the heuristic's judgement. A correlation,
  because a heuristic's scale is free (any positive multiple plays the same games).

Positions with one legal move are left out of regret and agreement: every player picks alike
there. Positions of one game share one outcome and one player's style, so every standard error
counts games, not positions, as the samples: a cluster-robust error for the two ratios, a
bootstrap over games (fixed seed) for the correlation. What an objective cost is counted as
positions: those its searches evaluated, or one per heuristic call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from engine.positions.set_file import PositionSet
from engine.solver import Solver

BOOTSTRAP_SAMPLES = 200


@dataclass(frozen=True)
class PositionScore:
    """An objective's value on a set (higher is better), its standard error, the games and
    positions it counted, and the positions evaluated computing it."""

    value: float
    stderr: float
    games: int
    positions: int
    evaluated: int


def regret(solver: Solver, positions: PositionSet) -> PositionScore:
    moves, evaluated = solver.decide_many(positions.arrays["board"])
    lost, spread, rows = _losses(moves, positions.arrays["values"])
    value, stderr, games = _ratio(lost, spread, positions.arrays["game"][rows])
    return PositionScore(0.0 - value, stderr, games, int(rows.sum()), evaluated)  # never -0.0


def agreement(solver: Solver, positions: PositionSet) -> PositionScore:
    moves, evaluated = solver.decide_many(positions.arrays["board"])
    lost, _spread, rows = _losses(moves, positions.arrays["values"])
    value, stderr, games = _ratio((lost == 0).astype(np.float64), np.ones(len(lost)),
                                  positions.arrays["game"][rows])
    return PositionScore(value, stderr, games, int(rows.sum()), evaluated)


def outcome_fit(solver: Solver, positions: PositionSet) -> PositionScore:
    heuristic = solver.evaluate_many(positions.arrays["board"])
    to_come = np.log1p(positions.score_to_come.astype(np.float64))
    before = np.log1p(positions.arrays["score_before"].astype(np.float64))
    game = positions.arrays["game"]
    # centred, so that the sums of squares keep their digits (heuristic values reach 1e6)
    sums = _moment_sums(*(column - column.mean() for column in (heuristic, to_come, before)),
                        game, positions.games)
    value = _partial_correlation(sums.sum(axis=0))
    rng = np.random.default_rng(0)
    counts = rng.multinomial(positions.games, np.full(positions.games, 1 / positions.games),
                             size=BOOTSTRAP_SAMPLES)
    resampled = [_partial_correlation(row) for row in counts @ sums]
    stderr = float(np.std(resampled, ddof=1))
    return PositionScore(value, stderr, positions.games, positions.positions, positions.positions)


def _losses(moves: np.ndarray, values: np.ndarray):
    """Per position with two legal moves or more: the oracle's value the chosen move loses
    against the best, and the spread of the legal moves' values; and which rows those are."""
    legal = ~np.isnan(values)
    rows = legal.sum(axis=1) >= 2
    values, moves = values[rows], moves[rows]
    best = np.nanmax(values, axis=1)
    worst = np.nanmin(values, axis=1)
    chosen = values[np.arange(len(moves)), moves]
    return best - chosen, best - worst, rows


def _ratio(numerator: np.ndarray, denominator: np.ndarray, game: np.ndarray):
    """sum(numerator) / sum(denominator) with its cluster-robust standard error, games as the
    clusters; and the number of games."""
    labels, cluster = np.unique(game, return_inverse=True)
    top = np.bincount(cluster, numerator, len(labels))
    bottom = np.bincount(cluster, denominator, len(labels))
    total = bottom.sum()
    if total == 0:
        return 0.0, math.inf, len(labels)
    ratio = top.sum() / total
    count = len(labels)
    if count < 2:
        return float(ratio), math.inf, count
    residuals = top - ratio * bottom
    stderr = math.sqrt(float((residuals ** 2).sum()) * count / (count - 1)) / float(total)
    return float(ratio), stderr, count


def _moment_sums(x, y, z, game, games: int) -> np.ndarray:
    """Per game: the count and the sums of x, y, z and of their products, [games, 10]."""
    columns = [np.ones_like(x), x, y, z, x * x, y * y, z * z, x * y, x * z, y * z]
    return np.stack([np.bincount(game, column, games) for column in columns], axis=1)


def _partial_correlation(sums: np.ndarray) -> float:
    """The correlation of x and y, z held fixed, from ``_moment_sums`` summed over games."""
    n, sx, sy, sz, sxx, syy, szz, sxy, sxz, syz = sums
    if n < 4:
        return 0.0
    cov = np.array([[sxx - sx * sx / n, sxy - sx * sy / n, sxz - sx * sz / n],
                    [0.0, syy - sy * sy / n, syz - sy * sz / n],
                    [0.0, 0.0, szz - sz * sz / n]])
    cov = np.triu(cov) + np.triu(cov, 1).T
    (xx, xy, xz), (_, yy, yz), (_, _, zz) = cov
    if zz <= 0:
        residual_x, residual_y, residual_xy = xx, yy, xy
    else:
        residual_x, residual_y, residual_xy = xx - xz * xz / zz, yy - yz * yz / zz, \
            xy - xz * yz / zz
    if residual_x <= 0 or residual_y <= 0:
        return 0.0
    return float(residual_xy / math.sqrt(residual_x * residual_y))


OBJECTIVES: dict[str, Callable[[Solver, PositionSet], PositionScore]] = {
    "regret": regret,
    "agreement": agreement,
    "outcome_fit": outcome_fit,
}
