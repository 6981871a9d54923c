"""Summaries of many games: mean and median score with a 95% interval, tile shares, speed; and
numbers as a person reads them.

Everything printed for people follows one convention: ``+/-`` is the half-width of a 95%
confidence interval (``Z95`` standard errors), never a bare standard error. Files written for
programs (``history.csv``'s ``best_stderr``, JSON) keep standard errors under their own names.
"""

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


def interval(half_width: float, games: int | None = None) -> str:
    """What follows a mean of ``games`` games: ``+/- H (95% CI)``, the half-width of its 95%
    interval, where there is one (``plus_minus``); else why there is none."""
    shown = plus_minus(half_width, games)
    return f"{shown} (95% CI)" if shown.startswith("+/-") else shown


def plus_minus(half_width: float, games: int | None = None) -> str:
    """``+/- H``, ``H`` the half-width of a 95% interval as ``readable`` writes it, where an
    interval exists. A single game has none (its spread is unknown: a fitness's standard error
    is then infinite), nor have games that all came out the same (a spread of 0 estimates
    nothing): either says so in parentheses, with ``games`` where it is known."""
    if (games is not None and games < 2) or math.isinf(half_width):
        return "(one game: no interval)"
    if half_width == 0:
        over = f" in {games:,} games" if games is not None else ""
        return f"(no spread{over}: no interval)"
    return f"+/- {readable(half_width)}"


def interval_cell(half_width: float) -> str:
    """A ``+/-`` column's cell: the half-width, or ``-`` where there is no interval (one game,
    or no spread: ``plus_minus``)."""
    return readable(half_width) if math.isfinite(half_width) and half_width != 0 else "-"


def readable(value: float, digits: int = 4) -> str:
    """``value`` as a person reads it: thousands separators and no exponent for ordinary
    magnitudes (33,820, not 3.382e+04), up to ``digits`` significant digits below that (0.132,
    11.23, 0.5). Only the tiny keep an exponent, where zeros would hide the digits."""
    if not math.isfinite(value) or value == 0:
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    if decimals > 6:
        return f"{value:.{digits}g}"
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if decimals else text


def clock(seconds: float) -> str:
    """A duration as a clock shows it, H:MM:SS (9:56:02), not as a fraction of an hour."""
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


def duration(seconds: float) -> str:
    """A duration as people say it: seconds below a minute (4.2 s, 0.35 s), a clock above
    (1:02:05): never a fraction of an hour, nor a clock that rounds a short wait to 0:00:00."""
    return f"{readable(seconds, 2)} s" if seconds < 59.5 else clock(seconds)


def counted(count: int, noun: str) -> str:
    """``count`` and ``noun``, plural unless one: "1 game", "1,536 games"."""
    return f"{count:,} {noun}" if count == 1 else f"{count:,} {noun}s"
