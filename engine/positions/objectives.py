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

Each objective is computed in two steps, so that a candidate's games can be scored apart (on
several CPUs) and put together: ``per_game`` gives one row of sums per game of the set, and
``finish`` the value and its error from the rows of all the games scored.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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


@dataclass(frozen=True)
class Objective:
    """One way to score a player on positions: ``per_game(solver, positions, games)`` gives a
    row of sums for each of ``games`` (indices into the set's games) and the positions it
    evaluated; ``finish(rows)`` the value (higher is better) and its standard error from the
    rows of every game scored; ``counted(rows)`` the positions the value counts."""

    name: str
    per_game: Callable[[Solver, PositionSet, np.ndarray], tuple[np.ndarray, int]]
    finish: Callable[[np.ndarray], tuple[float, float]]
    counted: Callable[[np.ndarray], int]

    def score(self, solver: Solver, positions: PositionSet,
              games: Sequence[int] | None = None) -> PositionScore:
        """The objective on ``games`` of the set (all of them by default)."""
        chosen = np.arange(positions.games) if games is None else np.asarray(games, np.int64)
        rows, evaluated = self.per_game(solver, positions, chosen)
        return self.combine([rows], evaluated)

    def combine(self, parts: Sequence[np.ndarray], evaluated: int) -> PositionScore:
        """The score from the rows of games scored apart (in any grouping), and the positions
        their scoring evaluated in all."""
        rows = np.concatenate(parts)
        value, stderr = self.finish(rows)
        return PositionScore(value, stderr, len(rows), self.counted(rows), evaluated)


def _rows_of(positions: PositionSet, games: np.ndarray) -> np.ndarray:
    """The positions of ``games`` (indices of the set's games), in the set's order."""
    return np.flatnonzero(np.isin(positions.arrays["game"], games))


def _slots(game: np.ndarray, games: np.ndarray) -> np.ndarray:
    """Each position's place in ``games``, the game indices scored (which hold every one of
    ``game``)."""
    order = np.argsort(games, kind="stable")
    return order[np.searchsorted(games[order], game)]


def _per_game_sums(slot: np.ndarray, count: int, columns: list[np.ndarray]) -> np.ndarray:
    """[count, len(columns)]: each column summed over the positions of each slot."""
    return np.stack([np.bincount(slot, column, count) for column in columns], axis=1)


def _losses(solver: Solver, positions: PositionSet, games: np.ndarray):
    """For the positions of ``games`` with two legal moves or more: each one's place in
    ``games``, the oracle's value the chosen move loses against the best, the spread of the
    legal moves' values; and the positions the searches evaluated."""
    rows = _rows_of(positions, games)
    values = positions.arrays["values"][rows]
    counted = (~np.isnan(values)).sum(axis=1) >= 2
    rows, values = rows[counted], values[counted]
    moves, evaluated = solver.decide_many(positions.arrays["board"][rows])
    best = np.nanmax(values, axis=1) if len(rows) else np.zeros(0)
    worst = np.nanmin(values, axis=1) if len(rows) else np.zeros(0)
    chosen = values[np.arange(len(rows)), moves]
    slot = _slots(positions.arrays["game"][rows], games)
    return slot, best - chosen, best - worst, evaluated


def _regret_rows(solver: Solver, positions: PositionSet, games: np.ndarray):
    slot, lost, spread, evaluated = _losses(solver, positions, games)
    return _per_game_sums(slot, len(games), [lost, spread, np.ones(len(slot))]), evaluated


def _agreement_rows(solver: Solver, positions: PositionSet, games: np.ndarray):
    slot, lost, _spread, evaluated = _losses(solver, positions, games)
    agreed = (lost == 0).astype(np.float64)
    ones = np.ones(len(slot))
    return _per_game_sums(slot, len(games), [agreed, ones, ones]), evaluated


def _ratio(rows: np.ndarray) -> tuple[float, float]:
    """sum(rows[:, 0]) / sum(rows[:, 1]) with its cluster-robust standard error, each row (a
    game) a cluster."""
    top, bottom = rows[:, 0], rows[:, 1]
    total = float(bottom.sum())
    count = len(rows)
    if total == 0:
        return 0.0, math.inf
    ratio = float(top.sum()) / total
    if count < 2:
        return ratio, math.inf
    residuals = top - ratio * bottom
    return ratio, math.sqrt(float((residuals ** 2).sum()) * count / (count - 1)) / total


def _negated_ratio(rows: np.ndarray) -> tuple[float, float]:
    ratio, stderr = _ratio(rows)
    return 0.0 - ratio, stderr  # never -0.0


def _outcome_rows(solver: Solver, positions: PositionSet, games: np.ndarray):
    """Per game: its positions' count, the means of the heuristic, of log(1 + points to come)
    and of log(1 + points so far), and their co-moments about those means (xx, yy, zz, xy, xz,
    yz): games then combine exactly, whatever the scale of the heuristic."""
    rows = _rows_of(positions, games)
    x = solver.evaluate_many(positions.arrays["board"][rows])
    y = np.log1p(positions.score_to_come[rows].astype(np.float64))
    z = np.log1p(positions.arrays["score_before"][rows].astype(np.float64))
    slot = _slots(positions.arrays["game"][rows], games)
    count = _per_game_sums(slot, len(games), [np.ones(len(rows))])[:, 0]
    means = _per_game_sums(slot, len(games), [x, y, z]) / np.maximum(count, 1)[:, None]
    dx, dy, dz = (v - means[slot, i] for i, v in enumerate((x, y, z)))
    moments = _per_game_sums(slot, len(games), [dx * dx, dy * dy, dz * dz, dx * dy, dx * dz,
                                                dy * dz])
    return np.column_stack([count, means, moments]), len(rows)


def _outcome_fit(rows: np.ndarray) -> tuple[float, float]:
    value = _partial_correlation(rows, np.ones(len(rows)))
    if len(rows) < 2:
        return value, math.inf
    rng = np.random.default_rng(0)
    weights = rng.multinomial(len(rows), np.full(len(rows), 1 / len(rows)),
                              size=BOOTSTRAP_SAMPLES)
    resampled = [_partial_correlation(rows, w) for w in weights]
    return value, float(np.std(resampled, ddof=1))


def _partial_correlation(rows: np.ndarray, weights: np.ndarray) -> float:
    """The correlation of x (the heuristic) and y (log points to come), z (log points so far)
    held fixed, over the games ``rows`` holds, each weighted (a bootstrap's counts)."""
    count = rows[:, 0] * weights
    n = count.sum()
    if n < 4:
        return 0.0
    means = rows[:, 1:4]
    mean = (count[:, None] * means).sum(axis=0) / n
    spread = means - mean  # each game's means about the whole's
    (xx, yy, zz, xy, xz, yz) = (
        (weights[:, None] * rows[:, 4:10]).sum(axis=0)
        + np.array([(count * spread[:, a] * spread[:, b]).sum()
                    for a, b in ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))]))
    if zz > 0:
        xx, yy, xy = xx - xz * xz / zz, yy - yz * yz / zz, xy - xz * yz / zz
    if xx <= 0 or yy <= 0:
        return 0.0
    return float(xy / math.sqrt(xx * yy))


def _counted_column(column: int) -> Callable[[np.ndarray], int]:
    return lambda rows: int(rows[:, column].sum())


OBJECTIVES = {objective.name: objective for objective in (
    Objective("regret", _regret_rows, _negated_ratio, _counted_column(2)),
    Objective("agreement", _agreement_rows, _ratio, _counted_column(1)),
    Objective("outcome_fit", _outcome_rows, _outcome_fit, _counted_column(0)),
)}


def regret(solver: Solver, positions: PositionSet) -> PositionScore:
    return OBJECTIVES["regret"].score(solver, positions)


def agreement(solver: Solver, positions: PositionSet) -> PositionScore:
    return OBJECTIVES["agreement"].score(solver, positions)


def outcome_fit(solver: Solver, positions: PositionSet) -> PositionScore:
    return OBJECTIVES["outcome_fit"].score(solver, positions)
