"""How many games each candidate of a generation plays: a fixed number, or a race. The loop
asks the run's budget (``evaluation.games``) for the games and for the weight of each rank; a
strategy only proposes candidates and learns from their fitness.

Games are the whole cost of tuning, and a game's score has a standard deviation of about half its
mean, so the question is where games decide something. Every candidate of a generation plays the
generation's seeds in the same order (common random numbers), so a candidate that played ``n``
games played the first ``n`` of them, whichever budget is used.

``FixedGames(n)``: every candidate plays ``n`` games (``evaluation.games: 384``).

``AdaptiveGames``: ``evaluation.games: {min: 64, max: 512}``. Every candidate plays ``min``
games; then, round after round, the candidates whose place in the ranking is still both uncertain
and worth something play ``batch`` more, until none is left or each has played ``max``.

Which places are worth something. CMA-ES uses a generation only through its ranking, and pycma
says how much each rank counts: its recombination weights. With pycma's defaults for ten
candidates the mean moves toward the five best with weights 0.46, 0.27, 0.16, 0.09 and 0.03, and
active CMA (on by default) pushes the covariance away from the five worst with weights -0.08,
-0.23, -0.35, -0.46 and -0.56. The weights fall steadily through the whole ranking, the boundary
between the best half and the rest included, so no single boundary decides: a candidate's
uncertainty matters as much as the weights of the ranks it could still take differ.

The rule. Each candidate's fitness has a confidence interval (its estimate plus or minus z
standard errors, z for the two-sided ``confidence``). Candidate j is surely better than i when
j's interval lies wholly above i's; then i can take any rank from 1 + (the number surely better)
to the population size - (the number surely worse). What is at stake is the difference between
the weights of the best and the worst of those ranks; a candidate whose stake is more than
``tolerance`` times the whole range of weights (best rank's weight minus the worst's) is
undecided. Everything here is a function of the games' results, so the games played are the same
whatever the number of workers, and a generation played again after an interruption plays the
same games.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

from tuner.games import pycma

if TYPE_CHECKING:
    from tuner.games.fitness import Fitness


@dataclass(frozen=True)
class FixedGames:
    """Every candidate plays ``games`` games."""

    games: int

    @property
    def first(self) -> int:
        """The games every candidate plays before anything is decided."""
        return self.games

    @property
    def most(self) -> int:
        """The most games one candidate can play in a generation."""
        return self.games

    def rank_weights(self, dimension: int, popsize: int) -> tuple[float, ...]:
        """None: no candidate plays more, so no rank is weighed."""
        return ()

    def more(self, fits: Sequence[Fitness], rank_weights: Sequence[float]) -> dict[int, int]:
        return {}

    def to_config(self) -> int:
        return self.games

    def describe(self) -> str:
        return f"{self.games} games per candidate"


@dataclass(frozen=True)
class AdaptiveGames:
    """``min`` games for every candidate, then ``batch`` more at a time for the undecided ones,
    up to ``max``; see the module's docstring for the rule."""

    min: int
    max: int
    batch: int
    confidence: float = 0.9
    tolerance: float = 0.1

    @property
    def first(self) -> int:
        return self.min

    @property
    def most(self) -> int:
        return self.max

    def rank_weights(self, dimension: int, popsize: int) -> tuple[float, ...]:
        """How much each rank of a generation of ``popsize`` candidates in ``dimension`` tuned
        parameters counts, best first: pycma's recombination weights (``tuner.games.pycma``),
        what the race spends its games on."""
        return pycma.rank_weights(dimension, popsize)

    def more(self, fits: Sequence[Fitness], rank_weights: Sequence[float]) -> dict[int, int]:
        """Candidate index -> the games it plays next round (none: the race is over)."""
        return {i: min(self.batch, self.max - fits[i].games)
                for i in undecided(fits, rank_weights, self.confidence, self.tolerance)
                if fits[i].games < self.max}

    def to_config(self) -> dict:
        return {"min": self.min, "max": self.max, "batch": self.batch,
                "confidence": self.confidence, "tolerance": self.tolerance}

    def describe(self) -> str:
        return f"{self.min} to {self.max} games per candidate, {self.batch} at a time"


Budget = FixedGames | AdaptiveGames


def interval_z(confidence: float) -> float:
    """The standard errors either side of an estimate that a two-sided interval of
    ``confidence`` spans; ``ValueError`` for a confidence so close to 1 that floating point
    rounds the interval's upper tail to nothing (above 1 - 2**-52)."""
    return NormalDist().inv_cdf((1 + confidence) / 2)  # StatisticsError is a ValueError


def undecided(fits: Sequence[Fitness], rank_weights: Sequence[float], confidence: float,
              tolerance: float) -> list[int]:
    """The candidates whose possible ranks carry weights more than ``tolerance`` of the whole
    range apart. ``rank_weights``: what each rank counts for, best rank first."""
    if len(rank_weights) != len(fits):
        raise ValueError(f"{len(rank_weights)} rank weights for {len(fits)} candidates")
    z = interval_z(confidence)
    low = [f.value - z * f.stderr for f in fits]
    high = [f.value + z * f.stderr for f in fits]
    span = max(rank_weights) - min(rank_weights)
    # sorted bounds count, for each candidate, the intervals wholly above and below its own in
    # n log n (a population of thousands is decided in milliseconds); a NaN bound compares
    # false, so it counts for no one, and a candidate's own interval is never wholly above or
    # below itself
    lows = sorted(v for v in low if not math.isnan(v))
    highs = sorted(v for v in high if not math.isnan(v))
    found = []
    for i in range(len(fits)):
        better = len(lows) - bisect.bisect_right(lows, high[i]) if not math.isnan(high[i]) else 0
        worse = bisect.bisect_left(highs, low[i]) if not math.isnan(low[i]) else 0
        best_rank, worst_rank = better, len(fits) - 1 - worse
        at_stake = rank_weights[best_rank] - rank_weights[worst_rank]
        if at_stake > tolerance * span or math.isnan(low[i]) or math.isnan(high[i]):
            found.append(i)
    return found
