"""Fitness: what a batch of games is worth, with its standard error. Higher is always better.

Every fitness lives in ``FITNESSES``, by its config name, with the ``evaluation`` keys it reads
and how two estimates of it pool (a candidate played twice, on the generation's seeds and again
on fresh ones). Adding a fitness is one entry there. The fitnesses of a position set (``regret``,
``agreement``, ``outcome_fit``: ``engine.positions.objectives``) score a candidate's games of the
run's set (``engine.positions.scoring.ScoredGame``) instead of games played.

CMA-ES minimises, so each strategy (``tuner.strategies``) negates fitness where it tells its
optimiser.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # configs name fitnesses: reading one must not load the compiled engine
    from engine.solver import GameResult

BOOTSTRAP_SAMPLES = 200


@dataclass(frozen=True)
class Fitness:
    """A fitness value and its standard error, from ``games`` games."""

    value: float
    stderr: float
    games: int


@dataclass(frozen=True)
class FitnessKind:
    """One way to score games. ``estimate(results, **options)`` scores games in seed order;
    ``options`` are the ``evaluation`` keys named in ``params``. ``pool(a, b, **options)`` scores
    two independent sets of one candidate's games together."""

    name: str
    summary: str
    params: tuple[str, ...]
    estimate: Callable[..., Fitness]
    pool: Callable[..., Fitness]
    positions: bool = False  # scores games of a position set, not games played


def _mean_of(samples: Callable[..., np.ndarray]) -> Callable[..., Fitness]:
    """A fitness that is the mean of one number per game, with the mean's standard error."""

    def estimate(results: Sequence[GameResult], **options) -> Fitness:
        values = np.asarray(samples(results, **options), dtype=np.float64)
        n = len(values)
        stderr = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
        return Fitness(float(values.mean()), stderr, n)

    return estimate


def _pool_means(estimate: Callable[..., Fitness]) -> Callable[..., Fitness]:
    """Means pool as the mean of the two estimates weighted by games."""

    def pool(a: Sequence[GameResult], b: Sequence[GameResult], **options) -> Fitness:
        return pooled(estimate(a, **options), estimate(b, **options))

    return pool


def pooled(a: Fitness, b: Fitness) -> Fitness:
    """Combine two independent estimates of one candidate's mean, weighted by games."""
    n = a.games + b.games
    value = (a.value * a.games + b.value * b.games) / n
    stderr = math.sqrt((a.stderr * a.games) ** 2 + (b.stderr * b.games) ** 2) / n
    return Fitness(value, stderr, n)


def _quantile(results: Sequence[GameResult], quantile: float) -> Fitness:
    """A score quantile; its standard error from a bootstrap with a fixed seed (reproducible)."""
    scores = np.array([r.score for r in results], dtype=np.float64)
    value = float(np.quantile(scores, quantile))
    rng = np.random.default_rng(0)
    resamples = rng.choice(scores, size=(BOOTSTRAP_SAMPLES, len(scores)), replace=True)
    stderr = float(np.quantile(resamples, quantile, axis=1).std(ddof=1))
    return Fitness(value, stderr, len(scores))


def _pool_quantile(a: Sequence[GameResult], b: Sequence[GameResult], quantile: float) -> Fitness:
    """A quantile of two sets of games is the quantile of all of them: the weighted mean of the
    two quantiles is not one."""
    return _quantile([*a, *b], quantile)


def _on_positions(name: str, summary: str) -> FitnessKind:
    """A position objective as a fitness: the candidate's scored games (in the set's order)
    put together."""

    def estimate(results) -> Fitness:
        # the engine's objectives: only where games are scored (a config names the fitness)
        from engine.positions.objectives import OBJECTIVES

        score = OBJECTIVES[name].combine([np.atleast_2d(r.row) for r in results],
                                         sum(r.moves_evaluated for r in results))
        return Fitness(score.value, score.stderr, score.games)

    return FitnessKind(name, summary, (), estimate, lambda a, b: estimate([*a, *b]), True)


def _registry(*kinds: FitnessKind) -> dict[str, FitnessKind]:
    return {kind.name: kind for kind in kinds}


_mean_score = _mean_of(lambda results: [r.score for r in results])
_mean_log2_max_tile = _mean_of(lambda results: np.log2([max(r.max_tile, 1) for r in results]))
_reach_rate = _mean_of(lambda results, tile: [r.reached(tile) for r in results])

FITNESSES = _registry(
    FitnessKind("mean_score", "mean game score (the default)", (), _mean_score,
                _pool_means(_mean_score)),
    FitnessKind("mean_log2_max_tile", "mean of log2(largest tile): consistency over jackpots",
                (), _mean_log2_max_tile, _pool_means(_mean_log2_max_tile)),
    FitnessKind("reach_rate", "share of games reaching evaluation.tile", ("tile",), _reach_rate,
                _pool_means(_reach_rate)),
    FitnessKind("score_quantile", "the evaluation.quantile of the scores, for players that must "
                "not fail", ("quantile",), _quantile, _pool_quantile),
    _on_positions("regret", "on the run's position set: the oracle's value the search's moves "
                  "lose, over the moves' spread, negated"),
    _on_positions("agreement", "on the run's position set: the share of positions where the "
                  "search picks the oracle's best move"),
    _on_positions("outcome_fit", "on the run's position set: the heuristic's partial "
                  "correlation with the log of the points to come"),
)


def score_fitness(results: Sequence[GameResult], kind: str, **options) -> Fitness:
    """The fitness of a candidate from its games (in seed order)."""
    return FITNESSES[kind].estimate(results, **options)


def within_noise(best: Fitness, worst: Fitness) -> bool:
    """True when best and worst differ by less than two standard errors of their difference."""
    return best.value - worst.value < 2.0 * math.hypot(best.stderr, worst.stderr)
