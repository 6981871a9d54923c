"""What ``tune compare`` reports: are these weights really better? Paired games decide.

Every weights file plays the same seeds (game i plays seed SEED + i), on Ray as the tuner plays
candidates. Per file: mean and median score, 95% confidence interval of the mean, the share of
games reaching 2048/4096/8192/16384, mean moves. Per pair: the mean paired score difference with
its 95% interval and a two-sided p-value from a paired t-test, using the normal approximation
(sound for the hundreds of games a comparison needs; at least 30 are required).

A sequential comparison (``tune compare --sequential``, ``tuner.analysis.sequential``) reports
the same of the pairs its test decided on, then the verdict: the margins, the log-likelihood
ratio and its bounds, the pairs spent, what a fixed test of the same error rates needs, and
the games played beyond the decided pairs, which do not count.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from engine.defaults import MILESTONES
from engine.depth import to_yaml
from engine.stats import Z95, counted, interval_cell, mean_ci, plus_minus, readable, summarize
from tuner.analysis.sequential import GAIN, NO_GAIN, SequentialTest, Verdict

MIN_GAMES = 30


def paired_difference(a: list[float], b: list[float]) -> dict[str, float]:
    """Mean of a - b, its 95% half-width and the paired t-test p-value (normal approximation)."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean, ci = mean_ci(diffs)
    sd = statistics.stdev(diffs)
    if sd == 0:
        p = 1.0 if mean == 0 else 0.0
    else:
        z = mean / (sd / math.sqrt(len(diffs)))
        p = math.erfc(abs(z) / math.sqrt(2))
    return {"mean_difference": mean, "ci95": ci, "p_value": p}


def labels_for(paths: list[str]) -> list[str]:
    """Short names: file stems, or parent/stem where stems repeat."""
    stems = [Path(p).stem for p in paths]
    return [f"{Path(p).parent.name}/{s}" if stems.count(s) > 1 else s for p, s in zip(paths, stems)]


def build_report(labels: list[str], jobs: list, results) -> dict:
    from engine.external.player import EnginePlayer  # here only to keep start-up fast (numpy)
    from engine.families import get_family

    players = []
    for label, job, games in zip(labels, jobs, results):
        s = summarize(games)
        players.append({
            "name": label,
            **({"engine": job.spec.name} if isinstance(job.spec, EnginePlayer) else
               {"family": get_family(job.spec.family).name}),
            "depth": to_yaml(job.spec.depth),
            "games": s.games,
            "mean": s.mean,
            "median": s.median,
            "ci95": s.ci95,
            "reach": {str(t): s.reach[t] for t in MILESTONES},
            "mean_moves": s.mean_moves,
        })
    pairs = []
    scores = [[g.score for g in games] for games in results]
    for i in range(len(jobs)):
        for j in range(i + 1, len(jobs)):
            pairs.append({"a": labels[i], "b": labels[j],
                          **paired_difference(scores[i], scores[j])})
    return {"seeds": [jobs[0].seeds[0], jobs[0].seeds[-1]], "z95": Z95, "players": players,
            "pairs": pairs}


def format_report(report: dict) -> str:
    reach_head = " ".join(f"{t:>6}" for t in MILESTONES)
    depth_width = max(5, *(len(str(p["depth"])) for p in report["players"]))  # auto:cap=5 too
    lines = [
        "scores on the same seeds; +/- is the half-width of a 95% confidence interval",
        (f"{'weights':<28} {'depth':>{depth_width}} {'games':>6} {'mean':>9} {'+/-':>9} "
         f"{'median':>9} {reach_head} {'moves':>7}"),
    ]
    for p in report["players"]:
        reach = " ".join(f"{p['reach'][str(t)]:>6.1%}" for t in MILESTONES)
        lines.append(
            f"{p['name']:<28} {p['depth']!s:>{depth_width}} {p['games']:>6,} "
            f"{p['mean']:>9,.0f} {interval_cell(p['ci95']):>9} {p['median']:>9,.0f} {reach} "
            f"{p['mean_moves']:>7,.0f}"
        )
    games = report["players"][0]["games"]  # every player plays the same seeds
    lines += ["", "paired differences (same seeds): a - b +/- 95% CI, paired t-test p-value"]
    for pair in report["pairs"]:
        lines.append(
            f"{pair['a']} - {pair['b']}: {pair['mean_difference']:+,.0f} "
            f"{plus_minus(pair['ci95'], games)}   {p_value(pair['p_value'])}"
        )
    if "sequential" in report:
        lines += ["", *sequential_lines(report["sequential"])]
    return "\n".join(lines)


def sequential_report(test: SequentialTest, verdict: Verdict, labels: list[str], most: int,
                      finished: int, in_flight: int) -> dict:
    """The verdict of ``test`` on ``labels`` (the candidate, then its baseline) after at most
    ``most`` pairs, as JSON values; ``finished`` games came back beyond the decided pairs and
    ``in_flight`` were playing when it decided (neither counts)."""
    return {
        "test": "GSPRT", "candidate": labels[0], "baseline": labels[1],
        "no_gain": str(test.no_gain), "gain": str(test.gain),
        "no_gain_points": verdict.no_gain_points, "gain_points": verdict.gain_points,
        "alpha": test.alpha, "beta": test.beta, "min_pairs": test.min_pairs,
        "verdict": verdict.outcome, "reason": reason(test, verdict, labels, most),
        # null where it is infinite (differences without spread): JSON has no infinity
        "llr": verdict.llr if math.isfinite(verdict.llr) else None,
        "lower": verdict.lower, "upper": verdict.upper,
        "pairs": verdict.pairs, "most_pairs": most,
        "sd": verdict.moments.sd, "fixed_pairs": verdict.fixed_pairs,
        "beyond": {"finished": finished, "in_flight": in_flight},
    }


def reason(test: SequentialTest, verdict: Verdict, labels: list[str], most: int) -> str:
    """The verdict in one line: which hypothesis, and why (the LLR against its bound)."""
    candidate, baseline = labels
    at = f"LLR {verdict.llr:.3g} after {verdict.pairs:,} pairs"
    if verdict.outcome == GAIN:
        return (f"H1 accepted: {candidate} gains at least "
                f"{_margin(str(test.gain), verdict.gain_points)} over {baseline} ({at} >= "
                f"{verdict.upper:.3g})")
    if verdict.outcome == NO_GAIN:
        return (f"H0 accepted: {candidate} gains at most "
                f"{_margin(str(test.no_gain), verdict.no_gain_points)} over {baseline} ({at} "
                f"<= {verdict.lower:.3g})")
    return (f"undecided at the maximum of {most:,} pairs: LLR {verdict.llr:.3g} between the "
            f"bounds {verdict.lower:.3g} and {verdict.upper:.3g}")


def sequential_lines(test: dict) -> list[str]:
    """``sequential_report``'s lines, under the comparison's table."""
    head = (f"sequential test (GSPRT, alpha {test['alpha']:g}, beta {test['beta']:g}) of "
            f"{test['candidate']} over {test['baseline']}: no gain "
            f"{_margin(test['no_gain'], test['no_gain_points'])}, gain "
            f"{_margin(test['gain'], test['gain_points'])}")
    fixed = (counted(test["fixed_pairs"], "pair") if test["fixed_pairs"] is not None else
             "none (the margins meet)")
    spent = (f"pairs spent: {test['pairs']:,} of at most {test['most_pairs']:,}; a fixed test "
             f"of the same error rates: {fixed} (at the differences' sd, "
             f"{readable(test['sd'])})")
    lines = [head, test["reason"], spent]
    beyond = test["beyond"]
    if beyond["finished"] or beyond["in_flight"]:
        lines.append(f"not counted, beyond the decided pairs: "
                     f"{counted(beyond['finished'], 'game')} finished, "
                     f"{beyond['in_flight']:,} in flight when it decided")
    return lines


def _margin(text: str, points: float) -> str:
    """A margin as given, with its points where it is a percentage of the baseline's mean."""
    return f"{text} ({points:+,.0f} points)" if text.endswith("%") else text


def p_value(p: float) -> str:
    """A p-value as people read it: 'p = 0.03', or 'p < 0.0001' rather than an exponent."""
    return "p < 0.0001" if p < 1e-4 else f"p = {readable(p, 2)}"
