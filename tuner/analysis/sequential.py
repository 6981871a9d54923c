"""The sequential test of ``tune compare --sequential``: pairs are played until they say "gain"
or "no gain" at error rates stated before the first game, as fishtest judges chess engines.

A pair is the baseline's score ``A`` and the candidate's ``B`` on one seed; ``d = B - A``. A
*margin* (what counts as no gain, what counts as a gain) is points, or a percentage of the
baseline's mean, so each hypothesis is one linear constraint on the means of ``(A, d)``:
``E[d] = mu + p E[A]`` (points: ``p = 0``; percent: ``mu = 0``). H0 puts the no-gain margin
there, H1 the gain margin.

The test is a generalised sequential probability ratio test (GSPRT), approximated as fishtest
approximates it: the pairs are taken for independent draws of a bivariate normal whose means
and covariance are unknown, each hypothesis is given its maximum likelihood under its constraint,
and the log of the likelihood ratio, ``k/2 ln(1 + z0**2/k) - k/2 ln(1 + z1**2/k)`` after ``k``
pairs, is taken to first order::

    LLR = (z0**2 - z1**2) / 2,    z = m / sqrt(v / k)

with ``m`` and ``v`` the mean and the (maximum-likelihood) variance of the hypothesis's residual
``e = d - mu - p A`` over the ``k`` pairs: ``z`` is how many standard errors the pairs' mean
lies from the hypothesis. In points this is Wald's SPRT for a normal mean with the variance
estimated, ``k (mu1 - mu0)(2m - mu0 - mu1) / 2v``, fishtest's form; in percent the
baseline's mean is the one the same pairs estimate, and its uncertainty (it is correlated with
``d``) is counted rather than taken for exact. The first order keeps a difference far beyond both margins deciding quickly, where the
exact logarithm would let both hypotheses explain it by a large spread, and the two agree where
decisions are close (``z**2/k`` is small there).

H1 is accepted once ``LLR >= ln(1/alpha)`` and H0 once ``LLR <= ln(beta)``. By Wald's
inequalities these bounds give error rates of at most ``alpha`` and ``beta`` for an exact
likelihood ratio. fishtest's ``ln((1-beta)/alpha)`` and ``ln(beta/(1-alpha))`` give up to
``alpha/(1-beta)``. No decision comes before ``MIN_PAIRS`` pairs: the first few pairs estimate
the variance too poorly, and a lucky streak would decide. The test reads the pairs in seed
order, one at a time, so its verdict is a function of the seeds' games alone.
``bench/sequential_error_rates.py`` measures its error rates and the pairs it spends on the
games saved under ``runs/compare/`` (docs/statistics.md).

Every function that reads moments (``SequentialTest.llr_of``) takes numbers or numpy arrays
alike, so the benchmark replays thousands of tests at once through the same code.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

MIN_PAIRS = 30  # as tune compare's least games for the normal approximation
ALPHA = BETA = 0.05  # fishtest's defaults
GAIN, NO_GAIN, UNDECIDED = "gain", "no gain", "undecided"


class SettingError(ValueError):
    """A setting of the test is out of range; ``setting`` names it (``gain``, ``no_gain``,
    ``alpha``, ``beta``, ``min_pairs``) and ``reason`` says what was expected."""

    def __init__(self, setting: str, reason: str):
        super().__init__(f"{setting}: {reason}")
        self.setting = setting
        self.reason = reason


@dataclass(frozen=True)
class Margin:
    """A difference of mean scores: ``value`` points, or (``percent``) ``value`` percent of the
    baseline's mean."""

    value: float
    percent: bool = False

    @classmethod
    def parse(cls, text: str) -> Margin:
        """``5%`` (of the baseline's mean) or ``5000`` (points); ``ValueError`` otherwise."""
        body = text.strip()
        try:
            value = float(body.removesuffix("%"))
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise ValueError(f"expected points (5000) or a percentage of the baseline's mean "
                             f"(5%), got {text!r}")
        return cls(value, body.endswith("%"))

    @property
    def fraction(self) -> float:
        """``p``: the share of the baseline's mean (0 for points)."""
        return self.value / 100 if self.percent else 0.0

    @property
    def offset(self) -> float:
        """``mu``: the points (0 for a percentage)."""
        return 0.0 if self.percent else self.value

    def points(self, baseline_mean: float) -> float:
        """The margin in points where the baseline's mean is ``baseline_mean``."""
        return self.offset + self.fraction * baseline_mean

    def __str__(self) -> str:
        return f"{self.value:g}%" if self.percent else f"{self.value:+,g} points"


@dataclass(frozen=True)
class Moments:
    """What the test reads of ``pairs`` pairs: means and (maximum-likelihood) variances of the
    baseline's score ``A`` and the difference ``d``, and their covariance."""

    pairs: int
    mean_difference: float
    mean_baseline: float
    var_difference: float
    var_baseline: float
    covariance: float

    @property
    def sd(self) -> float:
        """The sample standard deviation of the differences (``n - 1``)."""
        if self.pairs < 2:
            return 0.0
        return math.sqrt(self.var_difference * self.pairs / (self.pairs - 1))


class Pairs:
    """The pairs so far, in seed order, as running sums. Integer scores add up exactly (Python
    integers), so each moment is exact up to its one final division."""

    def __init__(self):
        self.count = 0
        self._sums = [0, 0, 0, 0, 0]  # d, d*d, A, A*A, A*d

    def add(self, candidate: float, baseline: float) -> None:
        d = candidate - baseline
        for i, value in enumerate((d, d * d, baseline, baseline * baseline, baseline * d)):
            self._sums[i] += value
        self.count += 1

    def moments(self) -> Moments:
        """The moments of the pairs so far (at least one)."""
        k = self.count
        d, dd, a, aa, ad = self._sums
        return Moments(k, d / k, a / k, max(0.0, (k * dd - d * d) / (k * k)),
                       max(0.0, (k * aa - a * a) / (k * k)), (k * ad - a * d) / (k * k))


@dataclass(frozen=True)
class Verdict:
    """What the test says after ``pairs`` pairs: ``outcome`` (``GAIN``: H1 accepted,
    ``NO_GAIN``: H0 accepted, ``UNDECIDED``: the maximum reached between the bounds), with the
    LLR and the bounds, the margins resolved at the pairs' baseline mean, and the pairs a fixed
    test of the same error rates needs at the differences' standard deviation."""

    outcome: str
    pairs: int
    llr: float
    lower: float
    upper: float
    no_gain_points: float
    gain_points: float
    moments: Moments
    fixed_pairs: int | None  # None where the margins meet (a percentage of a mean of 0)


@dataclass(frozen=True)
class SequentialTest:
    """The GSPRT of the module's docstring: H0 "no gain" (``no_gain``) against H1 "gain"
    (``gain``) at error rates ``alpha`` (accepting H1 where H0 holds) and ``beta`` (accepting H0
    where H1 holds), deciding from ``min_pairs`` pairs on.

    Raises:
        SettingError: an error rate outside (0, 0.5), margins in different units (unless one
            is 0), a gain not above the no-gain margin, or ``min_pairs`` below 1.
    """

    gain: Margin
    no_gain: Margin = Margin(0.0)
    alpha: float = ALPHA
    beta: float = BETA
    min_pairs: int = MIN_PAIRS

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            rate = getattr(self, name)
            if not 0 < rate < 0.5:  # NaN is in no range
                raise SettingError(name, f"expected an error rate in (0, 0.5), got {rate}")
        if self.min_pairs < 1:
            raise SettingError("min_pairs", f"expected at least 1, got {self.min_pairs}")
        gain, no_gain = self.gain, self.no_gain
        if gain.value and no_gain.value and gain.percent != no_gain.percent:
            raise SettingError("gain", f"expected the same unit as the no-gain margin (both "
                                       f"in percent or both in points), got {gain} and {no_gain}")
        if not gain.value > no_gain.value:  # in one unit, or one of them 0
            raise SettingError("gain", f"expected a gain above the no-gain margin ({no_gain}), "
                                       f"got {gain}")

    @property
    def lower(self) -> float:
        """H0 is accepted at or below it: ``ln(beta)``."""
        return math.log(self.beta)

    @property
    def upper(self) -> float:
        """H1 is accepted at or above it: ``ln(1/alpha)``."""
        return -math.log(self.alpha)

    def llr_of(self, pairs, mean_difference, mean_baseline, var_difference, var_baseline,
               covariance):
        """The log-likelihood ratio of H1 to H0 after ``pairs`` pairs of these moments
        (``Moments``'s fields; numbers, or numpy arrays of many tests at once)."""
        squares = []
        for margin in (self.no_gain, self.gain):
            p = margin.fraction
            mean = mean_difference - margin.offset - p * mean_baseline
            var = var_difference - 2 * p * covariance + p * p * var_baseline
            squares.append(_z_squared(pairs, mean, var))
        return (squares[0] - squares[1]) / 2

    def llr(self, moments: Moments) -> float:
        """The log-likelihood ratio of H1 to H0; 0 where both hypotheses fit without spread."""
        value = self.llr_of(moments.pairs, moments.mean_difference, moments.mean_baseline,
                            moments.var_difference, moments.var_baseline, moments.covariance)
        return 0.0 if math.isnan(value) else value

    def decide(self, pairs: Pairs, most: int | None = None) -> Verdict | None:
        """The verdict on ``pairs`` as they stand: a decision, or ``UNDECIDED`` once ``most``
        pairs are in; None while the test goes on."""
        moments = pairs.moments()
        llr = self.llr(moments)
        deciding = pairs.count >= self.min_pairs
        if deciding and llr >= self.upper:
            outcome = GAIN
        elif deciding and llr <= self.lower:
            outcome = NO_GAIN
        elif most is not None and pairs.count >= most:
            outcome = UNDECIDED
        else:
            return None
        no_gain = self.no_gain.points(moments.mean_baseline)
        gain = self.gain.points(moments.mean_baseline)
        fixed = fixed_pairs(moments.sd, gain - no_gain, self.alpha, self.beta) \
            if gain > no_gain else None
        return Verdict(outcome, pairs.count, llr, self.lower, self.upper, no_gain, gain, moments,
                       fixed)

    def run(self, pairs: Iterable[tuple[float, float]], most: int | None = None
            ) -> Verdict | None:
        """The verdict on ``(candidate, baseline)`` scores in seed order: the first decision,
        or ``UNDECIDED`` at ``most``; None where they run out before either."""
        judge = Judge(self, most)
        judge.extend(pairs)
        return judge.verdict


class Judge:
    """The test fed pairs in seed order as they come (``extend``), until it decides or
    reaches ``most`` pairs; ``verdict`` then says what it found."""

    def __init__(self, test: SequentialTest, most: int | None = None):
        self.test = test
        self.most = most
        self.pairs = Pairs()
        self.verdict: Verdict | None = None

    def extend(self, pairs: Iterable[tuple[float, float]]) -> bool:
        """Take these pairs (those after a verdict are not read); whether the test is over."""
        for candidate, baseline in pairs:
            if self.verdict is not None:
                break
            self.pairs.add(candidate, baseline)
            self.verdict = self.test.decide(self.pairs, self.most)
        return self.verdict is not None


def fixed_pairs(sd: float, gain: float, alpha: float = ALPHA, beta: float = BETA) -> int:
    """The pairs a fixed-length one-sided paired z-test needs to tell a difference of ``gain``
    points above the no-gain margin from none, at these error rates, for differences of
    standard deviation ``sd``: ``((z(1-alpha) + z(1-beta)) * sd / gain) ** 2``, rounded up."""
    if not gain > 0:
        raise ValueError(f"expected a gain above 0 points, got {gain}")
    z = NormalDist().inv_cdf(1 - alpha) + NormalDist().inv_cdf(1 - beta)
    return max(1, math.ceil((z * sd / gain) ** 2))


def _z_squared(pairs, mean, var):
    """``k mean**2 / var``: the square of how many standard errors a hypothesis's residual mean
    lies from 0; 0 where it lies at 0, infinite where it does not and has no spread."""
    if isinstance(mean, float | int) and isinstance(var, float | int):
        if mean == 0:
            return 0.0
        return pairs * mean * mean / var if var > 0 else math.inf
    import numpy  # here only for arrays (the benchmark's replays): tune's start-up loads no numpy

    with numpy.errstate(divide="ignore", invalid="ignore"):
        square = pairs * mean * mean / numpy.maximum(var, 0)
    return numpy.where(mean == 0, 0.0, square)
