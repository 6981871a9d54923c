"""The sequential test: its margins and settings, its log-likelihood ratio against the formulas
it stands for, its decisions, and the fixed test it is set beside."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from tuner.analysis.sequential import (
    GAIN,
    MIN_PAIRS,
    NO_GAIN,
    UNDECIDED,
    Judge,
    Margin,
    Pairs,
    SequentialTest,
    SettingError,
    fixed_pairs,
)

FIVE_PERCENT = SequentialTest(Margin(5.0, percent=True))


def scores(mean_gain: float, pairs: int, seed: int = 1, sd: float = 30_000.0) -> list:
    """(candidate, baseline) integer scores: the baseline about 100,000, the candidate
    ``mean_gain`` above it on average, the two correlated as one seed's games are."""
    rng = random.Random(seed)
    out = []
    for _ in range(pairs):
        luck = rng.gauss(0, sd)
        baseline = 100_000 + luck + rng.gauss(0, sd / 2)
        out.append((round(baseline + mean_gain + rng.gauss(0, sd)), round(baseline)))
    return out


@pytest.mark.parametrize(("text", "value", "percent"), [
    ("5%", 5.0, True), (" 2.5% ", 2.5, True), ("-1%", -1.0, True), ("5000", 5000.0, False),
    ("0", 0.0, False), ("1e4", 10_000.0, False),
])
def test_a_margin_is_points_or_a_percentage_of_the_baselines_mean(text, value, percent):
    margin = Margin.parse(text)
    assert (margin.value, margin.percent) == (value, percent)
    assert margin.points(200_000) == (value * 2_000 if percent else value)


@pytest.mark.parametrize("text", ["", "five", "5%%", "nan", "inf", "-inf%", "%"])
def test_a_margin_that_is_no_number_is_refused_with_what_was_expected(text):
    with pytest.raises(ValueError, match=r"expected points \(5000\) or a percentage of the "
                                         rf"baseline's mean \(5%\), got {text!r}"):
        Margin.parse(text)


@pytest.mark.parametrize(("settings", "setting", "reason"), [
    ({"alpha": 0.0}, "alpha", "expected an error rate in (0, 0.5), got 0.0"),
    ({"alpha": 0.5}, "alpha", "expected an error rate in (0, 0.5), got 0.5"),
    ({"beta": -0.1}, "beta", "expected an error rate in (0, 0.5), got -0.1"),
    ({"beta": math.nan}, "beta", "expected an error rate in (0, 0.5), got nan"),
    ({"gain": Margin(0.0, True)}, "gain", "expected a gain above the no-gain margin (+0 points), got 0%"),
    ({"gain": Margin(2.0, True), "no_gain": Margin(3.0, True)}, "gain",
     "expected a gain above the no-gain margin (3%), got 2%"),
    ({"gain": Margin(-100.0), "no_gain": Margin(0.0, True)}, "gain",
     "expected a gain above the no-gain margin (0%), got -100 points"),
    ({"gain": Margin(5.0, True), "no_gain": Margin(100.0)}, "gain",
     ("expected the same unit as the no-gain margin (both in percent or both in points), "
      "got 5% and +100 points")),
    ({"min_pairs": 0}, "min_pairs", "expected at least 1, got 0"),
])
def test_a_bad_setting_is_refused_naming_it(settings, setting, reason):
    with pytest.raises(SettingError) as raised:
        SequentialTest(**{"gain": Margin(5.0, True), **settings})
    assert (raised.value.setting, raised.value.reason) == (setting, reason)


def test_a_zero_margin_goes_with_either_unit():
    assert SequentialTest(Margin(5.0, True), Margin(0.0)).no_gain.points(1e5) == 0
    assert SequentialTest(Margin(0.0, True), Margin(-3.0)).gain.points(1e5) == 0


def test_the_bounds_are_walds_conservative_ones():
    test = SequentialTest(Margin(1.0), alpha=0.05, beta=0.1)
    assert test.upper == pytest.approx(math.log(20))
    assert test.lower == pytest.approx(math.log(0.1))


def moments_of(pairs: list) -> Pairs:
    held = Pairs()
    for candidate, baseline in pairs:
        held.add(candidate, baseline)
    return held


def test_in_points_the_llr_is_walds_sprt_of_a_normal_mean_with_its_variance_estimated():
    """Margins in points: k (mu1 - mu0)(2m - mu0 - mu1) / 2v, m and v the mean and the
    (maximum-likelihood) variance of the differences."""
    pairs = scores(2_000, 200)
    d = [c - b for c, b in pairs]
    k, m = len(d), sum(d) / len(d)
    v = sum((x - m) ** 2 for x in d) / k
    test = SequentialTest(Margin(3_000.0), Margin(-1_000.0))
    expected = k * (3_000 + 1_000) * (2 * m + 1_000 - 3_000) / (2 * v)
    assert test.llr(moments_of(pairs).moments()) == pytest.approx(expected, rel=1e-9)


def test_in_percent_the_llr_counts_the_baselines_mean_as_the_pairs_estimate_it():
    """Margins in percent: H_j says E[d - p_j A] = 0, so each hypothesis is judged by the
    z-score of its residual e_j = d - p_j A: LLR = (z0^2 - z1^2) / 2."""
    pairs = scores(4_000, 300, seed=2)
    test = SequentialTest(Margin(5.0, True), Margin(1.0, True))

    def z_squared(p: float) -> float:
        e = [c - b - p * b for c, b in pairs]
        mean = sum(e) / len(e)
        return len(e) * mean ** 2 / (sum((x - mean) ** 2 for x in e) / len(e))

    expected = (z_squared(0.01) - z_squared(0.05)) / 2
    assert test.llr(moments_of(pairs).moments()) == pytest.approx(expected, rel=1e-9)


def test_the_llr_of_arrays_is_the_llr_of_each():
    runs = [moments_of(scores(gain, 100, seed=gain)).moments() for gain in (0, 3_000, 9_000)]
    columns = [np.array([getattr(m, name) for m in runs], dtype=float) for name in (
        "pairs", "mean_difference", "mean_baseline", "var_difference", "var_baseline",
        "covariance")]
    assert FIVE_PERCENT.llr_of(*columns) == pytest.approx([FIVE_PERCENT.llr(m) for m in runs])


def test_a_clear_gain_is_accepted_early_and_a_clear_loss_rejected_early():
    gain = FIVE_PERCENT.run(scores(15_000, 5_000))
    assert gain.outcome == GAIN and MIN_PAIRS <= gain.pairs < gain.fixed_pairs / 4
    assert gain.llr >= gain.upper and gain.gain_points == pytest.approx(
        0.05 * gain.moments.mean_baseline)
    loss = FIVE_PERCENT.run(scores(-10_000, 5_000))
    assert loss.outcome == NO_GAIN and loss.pairs < loss.fixed_pairs / 4
    assert loss.llr <= loss.lower


def test_no_decision_comes_before_the_least_pairs():
    huge = [(candidate + 10**6, baseline) for candidate, baseline in scores(0, 100)]
    assert FIVE_PERCENT.run(huge).pairs == MIN_PAIRS
    assert FIVE_PERCENT.run(huge[:MIN_PAIRS - 1]) is None  # ran out before deciding
    assert SequentialTest(Margin(5.0, True), min_pairs=5).run(huge).pairs == 5


def test_a_difference_between_the_margins_runs_to_the_maximum_undecided():
    pairs = scores(2_500, 120, seed=3)  # half way from 0 to 5% of 100,000
    verdict = FIVE_PERCENT.run(pairs, most=120)
    assert verdict.outcome == UNDECIDED and verdict.pairs == 120
    assert verdict.lower < verdict.llr < verdict.upper
    assert FIVE_PERCENT.run(pairs[:119], most=120) is None


def test_identical_players_have_no_gain_at_the_least_pairs():
    same = [(baseline, baseline) for _, baseline in scores(0, 50)]
    verdict = FIVE_PERCENT.run(same)  # H1's residual, -5% of A, spreads as A does
    assert verdict.outcome == NO_GAIN and verdict.pairs == MIN_PAIRS
    assert verdict.llr <= verdict.lower and verdict.moments.sd == 0
    in_points = SequentialTest(Margin(500.0)).run(same)  # no spread at all: no gain for sure
    assert in_points.outcome == NO_GAIN and in_points.llr == -math.inf
    assert SequentialTest(Margin(500.0), Margin(-500.0)).run(same, most=40).llr == 0  # between


def test_the_verdict_is_the_same_however_the_pairs_arrive():
    pairs = scores(6_000, 3_000, seed=4)
    whole = FIVE_PERCENT.run(pairs)
    assert whole.outcome == GAIN
    rng = random.Random(5)
    judge, at = Judge(FIVE_PERCENT), 0
    while not judge.extend(pairs[at:at + (step := rng.randint(1, 40))]):
        at += step
    assert judge.verdict == whole
    assert judge.pairs.count == whole.pairs  # pairs after the verdict are not read


def test_the_fixed_test_is_the_one_sided_paired_z_tests_size():
    """At depth 4, the differences' sd is about 133k and classic-reference's mean 211k: a 5%
    gain needs about 1,700 pairs at 5% error rates both ways, a 3% gain about 4,800."""
    assert fixed_pairs(133_000, 0.05 * 211_000) == 1_720
    assert fixed_pairs(133_000, 0.03 * 211_000) == 4_778
    z = 1.6448536269514722 + 0.8416212335729143  # alpha 0.05, beta 0.2
    assert fixed_pairs(133_000, 0.03 * 211_000, beta=0.2) == math.ceil(
        (z * 133_000 / (0.03 * 211_000)) ** 2)
    assert fixed_pairs(0.0, 5.0) == 1
    with pytest.raises(ValueError, match="expected a gain above 0 points, got 0"):
        fixed_pairs(100.0, 0.0)
