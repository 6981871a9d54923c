"""What ``tune compare`` reports: are these weights really better? Paired games decide.

Every weights file plays the same seeds (game i plays seed SEED + i), on Ray as the tuner plays
candidates. Per file: mean and median score, 95% confidence interval of the mean, the share of
games reaching 2048/4096/8192/16384, mean moves. Per pair: the mean paired score difference with
its 95% interval and a two-sided p-value from a paired t-test, using the normal approximation
(sound for the hundreds of games a comparison needs; at least 30 are required).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path

from engine.defaults import MILESTONES
from engine.depth import to_yaml
from engine.stats import Z95, interval_cell, mean_ci, plus_minus, readable, summarize

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
    return "\n".join(lines)


def p_value(p: float) -> str:
    """A p-value as people read it: 'p = 0.03', or 'p < 0.0001' rather than an exponent."""
    return "p < 0.0001" if p < 1e-4 else f"p = {readable(p, 2)}"
