"""Fitness: what a batch of games is worth, with its standard error. Higher is always better.

Every fitness lives in ``FITNESSES``, by its config name, with the ``evaluation`` keys it reads.
Adding a fitness is one entry there.

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
    ``options`` are the ``evaluation`` keys named in ``params``."""

    name: str
    summary: str
    params: tuple[str, ...]
    estimate: Callable[..., Fitness]


def _mean_of(samples: Callable[..., np.ndarray]) -> Callable[..., Fitness]:
    """A fitness that is the mean of one number per game, with the mean's standard error."""

    def estimate(results: Sequence[GameResult], **options) -> Fitness:
        values = np.asarray(samples(results, **options), dtype=np.float64)
        n = len(values)
        stderr = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
        return Fitness(float(values.mean()), stderr, n)

    return estimate


def _quantile(results: Sequence[GameResult], quantile: float) -> Fitness:
    """A score quantile; its standard error from a bootstrap with a fixed seed (reproducible)."""
    scores = np.array([r.score for r in results], dtype=np.float64)
    value = float(np.quantile(scores, quantile))
    rng = np.random.default_rng(0)
    resamples = rng.choice(scores, size=(BOOTSTRAP_SAMPLES, len(scores)), replace=True)
    stderr = float(np.quantile(resamples, quantile, axis=1).std(ddof=1))
    return Fitness(value, stderr, len(scores))


def _registry(*kinds: FitnessKind) -> dict[str, FitnessKind]:
    return {kind.name: kind for kind in kinds}


_mean_score = _mean_of(lambda results: [r.score for r in results])
_reach_rate = _mean_of(lambda results, tile: [r.reached(tile) for r in results])

FITNESSES = _registry(
    FitnessKind("mean_score", "mean game score (the default)", (), _mean_score),
    FitnessKind("reach_rate", "share of games reaching evaluation.tile", ("tile",), _reach_rate),
    FitnessKind("score_quantile", "the evaluation.quantile of the scores, for players that must "
                "not fail", ("quantile",), _quantile),
)


def score_fitness(results: Sequence[GameResult], kind: str, **options) -> Fitness:
    """The fitness of a candidate from its games (in seed order)."""
    return FITNESSES[kind].estimate(results, **options)


def within_noise(best: Fitness, worst: Fitness) -> bool:
    """True when best and worst differ by less than two standard errors of their difference."""
    return best.value - worst.value < 2.0 * math.hypot(best.stderr, worst.stderr)
