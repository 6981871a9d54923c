"""Summaries of many games: mean and median score with a 95% interval, tile shares, speed."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.defaults import MILESTONES

if TYPE_CHECKING:
    from engine.solver import GameResult

Z95 = 1.959963984540054  # two-sided 95% normal quantile; the games are many, so normal is fine


@dataclass(frozen=True)
class Summary:
    """What a batch of games says about a player."""

    games: int
    mean: float
    median: float
    stdev: float
    ci95: float  # half-width of the 95% confidence interval of the mean
    reach: dict[int, float]  # share of games reaching each milestone tile
    max_tiles: dict[int, int]  # how many games ended with each largest tile
    mean_moves: float
    moves_per_second: float

    @property
    def stderr(self) -> float:
        return self.stdev / math.sqrt(self.games) if self.games else math.nan


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% normal confidence interval."""
    n = len(values)
    mean = statistics.fmean(values)
    stdev = statistics.stdev(values) if n > 1 else 0.0
    return mean, Z95 * stdev / math.sqrt(n)


def summarize(results: Sequence[GameResult]) -> Summary:
    """Summarize a non-empty batch of games."""
    scores = [r.score for r in results]
    mean, ci = mean_ci(scores)
    seconds = sum(r.seconds for r in results)
    moves = sum(r.moves for r in results)
    return Summary(
        games=len(results),
        mean=mean,
        median=statistics.median(scores),
        stdev=statistics.stdev(scores) if len(scores) > 1 else 0.0,
        ci95=ci,
        reach={t: sum(r.reached(t) for r in results) / len(results) for t in MILESTONES},
        max_tiles=dict(sorted(Counter(r.max_tile for r in results).items())),
        mean_moves=moves / len(results),
        moves_per_second=moves / seconds if seconds > 0 else math.inf,
    )
