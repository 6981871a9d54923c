"""Error rates of ``tune compare --sequential``, shown rather than assumed: its test replayed
thousands of times on pairs resampled from the games saved under ``runs/compare/``.

For each source (a games file and two of its players, ``SOURCES``: a baseline and a candidate),
the candidate's scores are shifted by one constant so that the mean difference of the file's
pairs sits at a point between the no-gain margin (0) and the gain margin (1), both resolved at
the file's baseline mean. Each replay draws pairs from the file's pairs with replacement
(seeded), one after another, and runs the test on them until it decides, or until ``--most``
times the pairs of the fixed test of the same error rates (a maximum the test all but never
meets). At the no-gain margin a gain found is a false positive; at the gain margin anything else
is a false negative. Beside the rates: the pairs spent, mean and 95th percentile, over the fixed
test's (a one-sided paired z-test at the file's standard deviation of the differences).

The measured rates carry the simulation's own noise: a rate measured on R replays whose truth
is the stated rate p has a binomial standard error of sqrt(p (1 - p) / R). A rate within the
stated one plus two standard errors is "ok".

The replays run as numpy arrays, thousands at once, through the test's own function of the
moments (``SequentialTest.llr_of``) and bounds; ``--check N`` runs the first N replays of
every point again pair by pair through ``SequentialTest.run``, which ``tune compare`` runs,
and fails where a verdict or its pairs differ.

It reaches tune2048 through ``tuner.games.saved_games.SavedGames`` (``players``, ``games``) and
``tuner.analysis.sequential``: ``Margin``, ``SequentialTest`` (``llr_of``, ``lower``,
``upper``, ``min_pairs``, ``run``), ``fixed_pairs``, ``GAIN``, ``NO_GAIN``.

Run: ``python bench/sequential_error_rates.py`` (a few minutes at 10,000 replays a point).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

from tuner.analysis.sequential import (
    ALPHA,
    BETA,
    GAIN,
    MIN_PAIRS,
    NO_GAIN,
    Margin,
    SequentialTest,
    fixed_pairs,
)
from tuner.games.saved_games import SavedGames

REPO = Path(__file__).resolve().parents[1]
# games file -> (its baseline player, its candidate), by index in the file's players
SOURCES = {
    "depth4-350": (1, 0),  # classic-reference, classic-d3 at depth 4
    "strategies-d3-1000": (2, 1),  # classic-reference, classic-d3 at depth 3
    "nneonneo-d3-1000": (1, 0),  # nneonneo's defaults, nneonneo-d3, in nneonneo/2048-ai
    "c-engine-d2-1000": (1, 0),  # the C engine's defaults, c-engine-d2
    "auto5-100": (1, 0),  # classic-reference, classic-d3 at auto:cap=5
    "nodes150k-300": (1, 0),  # classic-d3, classic-nodes at nodes:150000
}
POINTS = (0.0, 0.25, 0.5, 0.75, 1.0)  # the true difference: 0 at no gain, 1 at the gain
CHUNK = 1000  # replays at once
BLOCK = 512  # pairs drawn at a time


def pairs_of(path: Path, baseline: int, candidate: int) -> tuple[np.ndarray, np.ndarray]:
    """The two players' scores on the seeds both played, in seed order."""
    saved = SavedGames(path, [])
    games = saved.games
    seeds = sorted(set(games[baseline]) & set(games[candidate]))
    return (np.array([games[baseline][s].score for s in seeds], dtype=float),
            np.array([games[candidate][s].score for s in seeds], dtype=float))


def replay(test: SequentialTest, base: np.ndarray, cand: np.ndarray, count: int, most: int,
           rng: np.random.Generator, keep: int = 0):
    """``count`` tests on pairs drawn with replacement: each one's outcome (1 gain, -1 no
    gain, 0 undecided at ``most``) and pairs spent, and the indices of the first ``keep``
    replays' draws (to run them again pair by pair)."""
    outcome = np.zeros(count, dtype=int)
    spent = np.full(count, most)
    kept = []
    for first in range(0, count, CHUNK):
        rows = min(CHUNK, count - first)
        sums = np.zeros((5, rows))
        done = 0
        decided = np.zeros(rows, dtype=int)
        drawn = []
        while done < most and not decided.all():
            width = min(BLOCK, most - done)
            index = rng.integers(0, len(base), size=(rows, width))
            if first == 0 and keep:
                drawn.append(index[:keep])
            a = base[index]
            d = cand[index] - a
            cum = [sums[i][:, None] + np.cumsum(x, axis=1)
                   for i, x in enumerate((d, d * d, a, a * a, a * d))]
            k = np.arange(done + 1, done + width + 1, dtype=float)[None, :]
            mean_d, mean_a = cum[0] / k, cum[2] / k
            with np.errstate(invalid="ignore"):  # NaN where both fit without spread: no verdict
                llr = test.llr_of(k, mean_d, mean_a, np.maximum(cum[1] / k - mean_d ** 2, 0),
                                  np.maximum(cum[3] / k - mean_a ** 2, 0),
                                  cum[4] / k - mean_d * mean_a)
            llr[:, :max(0, test.min_pairs - done - 1)] = 0.0  # no decision before min_pairs
            gain, no_gain = llr >= test.upper, llr <= test.lower
            hit = gain | no_gain
            at = hit.argmax(axis=1)
            new = np.nonzero((decided == 0) & hit.any(axis=1))[0]
            decided[new] = np.where(gain[new, at[new]], 1, -1)
            spent[first + new] = done + at[new] + 1
            sums = np.array([c[:, -1] for c in cum])
            done += width
        outcome[first:first + rows] = decided
        if drawn:
            kept = np.concatenate(drawn, axis=1)
    return outcome, spent, kept


def check(test: SequentialTest, base, cand, most: int, outcome, spent, kept) -> int:
    """Run the kept replays pair by pair through ``SequentialTest.run``; how many differ."""
    wrong = 0
    code = {GAIN: 1, NO_GAIN: -1}
    for row, index in enumerate(kept):  # the draws kept reach every kept replay's verdict
        verdict = test.run(zip(cand[index].tolist(), base[index].tolist()), most)
        wrong += verdict is None or (code.get(verdict.outcome, 0), verdict.pairs) != (
            outcome[row], spent[row])
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sources", nargs="+", choices=SOURCES, default=list(SOURCES),
                        metavar="NAME", help=f"games files under --dir (default: {', '.join(SOURCES)})")
    parser.add_argument("--dir", type=Path, default=REPO / "runs" / "compare",
                        help="where the games files are (default runs/compare)")
    parser.add_argument("--replays", type=int, default=10_000, help="tests a point (default 10,000)")
    parser.add_argument("--points", type=float, nargs="+", default=list(POINTS),
                        help="true differences, 0 at no gain and 1 at the gain (default 0 .25 .5 .75 1)")
    parser.add_argument("--gain", default="5%", help="the gain margin (default 5%%)")
    parser.add_argument("--no-gain", default="0%", help="the no-gain margin (default 0%%)")
    parser.add_argument("--alpha", type=float, default=ALPHA)
    parser.add_argument("--beta", type=float, default=BETA)
    parser.add_argument("--min-pairs", type=int, default=MIN_PAIRS,
                        help=f"no decision before (default {MIN_PAIRS}, tune compare's)")
    parser.add_argument("--most", type=float, default=10.0,
                        help="the most pairs a replay plays, in fixed tests' pairs (default 10)")
    parser.add_argument("--check", type=int, default=3, metavar="N",
                        help="replays of every point run again pair by pair (default 3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        test = SequentialTest(Margin.parse(args.gain), Margin.parse(args.no_gain), args.alpha,
                              args.beta, args.min_pairs)
    except ValueError as err:
        parser.error(str(err))
    started = time.perf_counter()
    print(f"sequential test: GSPRT, no gain {test.no_gain}, gain {test.gain}, alpha "
          f"{test.alpha:g}, beta {test.beta:g}, from {test.min_pairs} pairs on; "
          f"{args.replays:,} replays a point, seed {args.seed}")
    print(f"{'source':<20} {'pairs':>5} {'base mean':>9} {'sd of d':>8} {'fixed':>6} {'point':>5} "
          f"{'gain':>6} {'no gain':>7} {'undec.':>6} {'mean pairs':>14} {'95th pct':>14}")
    rates, wrong = [], 0
    for name in args.sources:
        baseline, candidate = SOURCES[name]
        base, cand = pairs_of(args.dir / f"{name}.games.json", baseline, candidate)
        diff = cand - base
        mean = float(base.mean())
        no_gain, gain = test.no_gain.points(mean), test.gain.points(mean)
        fixed = fixed_pairs(float(diff.std(ddof=1)), gain - no_gain, test.alpha, test.beta)
        most = max(test.min_pairs, math.ceil(args.most * fixed))
        at_bounds = {}
        for point in args.points:
            shifted = cand + (no_gain + point * (gain - no_gain) - diff.mean())
            outcome, spent, kept = replay(test, base, shifted, args.replays, most,
                                          np.random.default_rng(args.seed), args.check)
            wrong += check(test, base, shifted, most, outcome, spent, kept)
            shares = [np.mean(outcome == value) for value in (1, -1, 0)]
            mean_pairs, p95 = float(spent.mean()), float(np.percentile(spent, 95))
            print(f"{name:<20} {len(base):>5,} {mean:>9,.0f} {diff.std(ddof=1):>8,.0f} "
                  f"{fixed:>6,} {point:>5g} {shares[0]:>6.2%} {shares[1]:>7.2%} {shares[2]:>6.2%} "
                  f"{mean_pairs:>7,.0f} ({mean_pairs / fixed:.2f}) {p95:>7,.0f} ({p95 / fixed:.2f})",
                  flush=True)
            if point in (0.0, 1.0):
                at_bounds[point] = (shares[0] if point == 0 else 1 - shares[0],
                                    mean_pairs / fixed)
        if len(at_bounds) == 2:
            rates.append((name, at_bounds[0.0], at_bounds[1.0]))
    if rates:
        se = [math.sqrt(p * (1 - p) / args.replays) for p in (test.alpha, test.beta)]
        print(f"\nerror rates (ok: within the stated rate plus two binomial standard errors of "
              f"the simulation, {2 * se[0]:.2%} and {2 * se[1]:.2%}), pairs spent at the bounds "
              f"over the fixed test's")
        print(f"{'source':<20} {'false positives':>18} {'false negatives':>18} "
              f"{'pairs at no gain':>17} {'pairs at gain':>14}")
        for name, (fp, at_no_gain), (fn, at_gain) in rates:
            marks = ["ok" if rate <= stated + 2 * s else "OVER"
                     for rate, stated, s in ((fp, test.alpha, se[0]), (fn, test.beta, se[1]))]
            print(f"{name:<20} {fp:>13.2%} {marks[0]:<4} {fn:>13.2%} {marks[1]:<4} "
                  f"{at_no_gain:>17.2f} {at_gain:>14.2f}")
    print(f"\nchecked pair by pair: {args.check} replays a point, {wrong} differ; "
          f"{time.perf_counter() - started:.0f} s")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
