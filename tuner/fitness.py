"""Fitness: what a batch of games is worth, with its standard error. Higher is always better.

The choices:
- ``mean_score`` (default): mean game score.
- ``mean_log2_max_tile``: mean of log2(largest tile), which rewards consistency over jackpots.
- ``reach_rate``: share of games reaching ``tile``.
- ``score_quantile``: the ``quantile`` (e.g. 0.25) of the scores, for players that must not fail.

CMA-ES minimises, so ``tuner.strategy`` negates fitness when it tells CMA-ES: in that one place.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.solver import GameResult

BOOTSTRAP_SAMPLES = 200


@dataclass(frozen=True)
class Fitness:
    """A fitness value and its standard error, from ``games`` games."""

    value: float
    stderr: float
    games: int


def score_fitness(
    results: Sequence[GameResult], kind: str, tile: int = 2048, quantile: float = 0.25
) -> Fitness:
    """The fitness of a candidate from its games (in seed order)."""
    n = len(results)
    if kind == "mean_score":
        samples = np.array([r.score for r in results], dtype=np.float64)
    elif kind == "mean_log2_max_tile":
        samples = np.log2([max(r.max_tile, 1) for r in results])
    elif kind == "reach_rate":
        samples = np.array([r.reached(tile) for r in results], dtype=np.float64)
    elif kind == "score_quantile":
        return _quantile_fitness(np.array([r.score for r in results], dtype=np.float64), quantile)
    else:
        raise ValueError(f"unknown fitness {kind!r}")
    stderr = float(samples.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return Fitness(float(samples.mean()), stderr, n)


def _quantile_fitness(scores: np.ndarray, quantile: float) -> Fitness:
    """A score quantile; its standard error from a bootstrap with a fixed seed (reproducible)."""
    value = float(np.quantile(scores, quantile))
    rng = np.random.default_rng(0)
    resamples = rng.choice(scores, size=(BOOTSTRAP_SAMPLES, len(scores)), replace=True)
    stderr = float(np.quantile(resamples, quantile, axis=1).std(ddof=1))
    return Fitness(value, stderr, len(scores))


def pooled(a: Fitness, b: Fitness) -> Fitness:
    """Combine two independent estimates of one candidate's fitness, weighted by games."""
    n = a.games + b.games
    value = (a.value * a.games + b.value * b.games) / n
    stderr = math.sqrt((a.stderr * a.games) ** 2 + (b.stderr * b.games) ** 2) / n
    return Fitness(value, stderr, n)


def within_noise(best: Fitness, worst: Fitness) -> bool:
    """True when best and worst differ by less than two standard errors of their difference."""
    return best.value - worst.value < 2.0 * math.hypot(best.stderr, worst.stderr)
