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

from engine.stats import Z95, counted, plus_minus, readable

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
    """One way to score games. ``estimate(results, **options)`` scores games in seed order,
    ``paired(a, b, **options)`` the difference of two players' games on the same seeds
    (``paired_difference``); ``options`` are the ``evaluation`` keys named in ``params``."""

    name: str
    summary: str
    params: tuple[str, ...]
    estimate: Callable[..., Fitness]
    paired: Callable[..., Fitness]


def _mean_of(samples: Callable[..., np.ndarray]) -> tuple[Callable[..., Fitness], ...]:
    """A fitness that is the mean of one number per game, with the mean's standard error; and
    the difference of two players' such fitness on the same seeds: the mean of the games'
    differences."""

    def estimate(results: Sequence[GameResult], **options) -> Fitness:
        return _mean(np.asarray(samples(results, **options), dtype=np.float64))

    def paired(a: Sequence[GameResult], b: Sequence[GameResult], **options) -> Fitness:
        return _mean(np.asarray(samples(a, **options), dtype=np.float64)
                     - np.asarray(samples(b, **options), dtype=np.float64))

    return estimate, paired


def _mean(values: np.ndarray) -> Fitness:
    n = len(values)
    stderr = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return Fitness(float(values.mean()), stderr, n)


def _quantile(results: Sequence[GameResult], quantile: float) -> Fitness:
    """A score quantile; its standard error from a bootstrap with a fixed seed (reproducible)."""
    scores = np.array([r.score for r in results], dtype=np.float64)
    value = float(np.quantile(scores, quantile))
    rng = np.random.default_rng(0)
    resamples = rng.choice(scores, size=(BOOTSTRAP_SAMPLES, len(scores)), replace=True)
    stderr = float(np.quantile(resamples, quantile, axis=1).std(ddof=1))
    return Fitness(value, stderr, len(scores))


def _quantile_paired(a: Sequence[GameResult], b: Sequence[GameResult],
                     quantile: float) -> Fitness:
    """The difference of two score quantiles; its standard error from a bootstrap that draws the
    same seeds for both players (a fixed seed: reproducible)."""
    first = np.array([r.score for r in a], dtype=np.float64)
    second = np.array([r.score for r in b], dtype=np.float64)
    value = float(np.quantile(first, quantile) - np.quantile(second, quantile))
    if len(first) < 2:
        return Fitness(value, math.inf, len(first))
    drawn = np.random.default_rng(0).integers(0, len(first), size=(BOOTSTRAP_SAMPLES, len(first)))
    differences = (np.quantile(first[drawn], quantile, axis=1)
                   - np.quantile(second[drawn], quantile, axis=1))
    return Fitness(value, float(differences.std(ddof=1)), len(first))


def _registry(*kinds: FitnessKind) -> dict[str, FitnessKind]:
    return {kind.name: kind for kind in kinds}


_mean_score = _mean_of(lambda results: [r.score for r in results])
_reach_rate = _mean_of(lambda results, tile: [r.reached(tile) for r in results])

FITNESSES = _registry(
    FitnessKind("mean_score", "mean game score (the default)", (), *_mean_score),
    FitnessKind("reach_rate", "share of games reaching evaluation.tile", ("tile",), *_reach_rate),
    FitnessKind("score_quantile", "the evaluation.quantile of the scores, for players that must "
                "not fail", ("quantile",), _quantile, _quantile_paired),
)


def score_fitness(results: Sequence[GameResult], kind: str, **options) -> Fitness:
    """The fitness of a candidate from its games (in seed order)."""
    return FITNESSES[kind].estimate(results, **options)


def paired_difference(a: Sequence[GameResult], b: Sequence[GameResult], kind: str,
                      **options) -> Fitness:
    """The fitness of games ``a`` less that of games ``b``, both played on the same seeds in
    the same order, with the standard error of that difference from the pairs of games: what a
    seed does to both players (a lucky run of tiles) cancels, where the two fitnesses' own
    errors would count it twice."""
    if [r.seed for r in a] != [r.seed for r in b]:
        raise ValueError(f"paired games must share their seeds in order, got {len(a)} and "
                         f"{len(b)} games on different seeds")
    return FITNESSES[kind].paired(a, b, **options)


@dataclass(frozen=True)
class Gain:
    """How far the winner of a run is above a ``mark`` on the validation games (its row's
    label: ``start``, ``baseline NAME``): ``value``, the winner's fitness less the mark's, with
    its standard error, from the pairs of games where ``paired`` (``paired_difference``), else
    from the two fitnesses' own errors (all a run of tune2048 before 0.4 kept)."""

    mark: str
    value: float
    stderr: float
    games: int | None  # None: not known
    paired: bool

    @property
    def ci95(self) -> float:
        """The half-width of the difference's 95% confidence interval."""
        return Z95 * self.stderr

    @property
    def within_noise(self) -> bool:
        """Whether the 95% interval holds 0 (or there is none: one game)."""
        return not abs(self.value) > self.ci95

    def words(self) -> str:
        """The verdict as a person reads it: ``the winner beat the start (+9,657 +/- 4,102,
        paired on the same 500 games)``; ``within noise`` where the interval holds 0."""
        same = "games" if self.games is None else counted(self.games, "game")
        how = f"paired on the same {same}" if self.paired else "unpaired"
        if self.paired and self.value == 0 and self.stderr == 0:
            return f"the winner scored as the {self.mark} in every game ({how})"
        if self.within_noise:
            verdict = f"the winner did not beat the {self.mark}: within noise"
        elif self.value > 0:
            verdict = f"the winner beat the {self.mark}"
        else:
            verdict = f"the {self.mark} beat the winner"
        sign = "-" if self.value < 0 else "+"
        return (f"{verdict} ({sign}{readable(abs(self.value))} "
                f"{plus_minus(self.ci95, self.games)}, {how})")


def within_noise(best: Fitness, worst: Fitness) -> bool:
    """True when best and worst differ by less than two standard errors of their difference."""
    return best.value - worst.value < 2.0 * math.hypot(best.stderr, worst.stderr)
