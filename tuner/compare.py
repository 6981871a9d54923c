"""``tune compare A.yaml B.yaml ...``: are these weights really better? Paired games decide.

Every weights file plays the same seeds (game i plays seed SEED + i), on Ray as the tuner plays
candidates. Per file: mean and median score, 95% confidence interval of the mean, the share of
games reaching 2048/4096/8192/16384, mean moves. Per pair: the mean paired score difference with
its 95% interval and a two-sided p-value from a paired t-test, using the normal approximation
(sound for the hundreds of games a comparison needs; at least 30 are required).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

from engine import finite
from engine.defaults import DEFAULT_CUTOFF, MILESTONES
from engine.families import get_family
from engine.stats import Z95, mean_ci, summarize
from engine.usage import (
    MAX_GAMES,
    MAX_WORKERS,
    UsageError,
    check_address,
    check_cutoff,
    check_int,
    check_seed_range,
)
from engine.weights_file import MAX_DEPTH, read_weights
from tuner.config import RaySection

MIN_GAMES = 30


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", help="play weights files on the same seeds and test their differences"
    )
    parser.add_argument("weights", nargs="+", metavar="FILE", help="weights files to compare")
    parser.add_argument("--family-file", action="append", default=[], metavar="PY",
                        help="allow a weights file's family to be imported from this file "
                             "(repeatable): a weights file alone never runs code")
    parser.add_argument("--depth", type=int,
                        help="search depth for every file (default: each file's own depth)")
    parser.add_argument("--cutoff", type=float, default=DEFAULT_CUTOFF,
                        help="probability cutoff, in [0, 1) (0: exact)")
    parser.add_argument("--games", type=int, default=200,
                        help=f"games per file, {MIN_GAMES} to {MAX_GAMES} (default 200)")
    parser.add_argument("--seed", type=int, default=10**9,
                        help="game i plays seed SEED + i, a 64-bit seed (default 1e9, away from "
                             "tuning seeds)")
    parser.add_argument("--workers", type=int,
                        help=f"local Ray workers, 1 to {MAX_WORKERS} (default: all cores)")
    parser.add_argument("--address", help="join a Ray cluster: 'auto' or HOST:PORT")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


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


def check_args(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any file is read or Ray starts."""
    if args.games < MIN_GAMES:
        raise UsageError(f"--games must be at least {MIN_GAMES} for a paired test, got "
                         f"{args.games}")
    check_int("--games", args.games, MIN_GAMES, MAX_GAMES)
    check_int("--depth", args.depth, 0, MAX_DEPTH)
    check_cutoff(args.cutoff)
    check_seed_range(args.seed, args.games)
    check_int("--workers", args.workers, 1, MAX_WORKERS)
    check_address(args.address)


def run(args: argparse.Namespace) -> int:
    check_args(args)
    loaded = [read_weights(path, args.family_file) for path in args.weights]
    for path, weights in zip(args.weights, loaded):
        finite.check_weights_from(path, weights.family, weights.weights)
    from tqdm import tqdm

    from engine.solver import PlayerSpec
    from tuner.evaluation import Job, evaluator_for

    labels = labels_for(args.weights)
    seeds = tuple(args.seed + i for i in range(args.games))
    jobs = [
        Job(i, PlayerSpec(w.family, w.weights, w.depth if args.depth is None else args.depth,
                          args.cutoff), seeds)
        for i, w in enumerate(loaded)
    ]
    ray = RaySection.from_values("tune compare", workers=args.workers, address=args.address)
    with evaluator_for(ray, [w.family for w in loaded]) as evaluator, \
            tqdm(total=len(jobs) * len(seeds), unit="game", file=sys.stderr, disable=None,
                 leave=False) as bar:
        results = evaluator.play(jobs, bar.update)
    report = build_report(labels, jobs, results)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def build_report(labels: list[str], jobs: list, results) -> dict:
    players = []
    for label, job, games in zip(labels, jobs, results):
        s = summarize(games)
        players.append({
            "name": label,
            "family": get_family(job.spec.family).name,
            "depth": job.spec.depth,
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
    lines = [
        (f"{'weights':<28} {'depth':>5} {'games':>6} {'mean':>9} {'95% CI':>9} {'median':>9} "
        f"{reach_head} {'moves':>7}")
    ]
    for p in report["players"]:
        reach = " ".join(f"{p['reach'][str(t)]:>6.1%}" for t in MILESTONES)
        lines.append(
            f"{p['name']:<28} {p['depth']:>5} {p['games']:>6} {p['mean']:>9,.0f} "
            f"{p['ci95']:>9,.0f} {p['median']:>9,.0f} {reach} {p['mean_moves']:>7,.0f}"
        )
    lines += ["", "paired differences (same seeds): a - b, 95% CI, paired t-test p-value"]
    for pair in report["pairs"]:
        lines.append(
            f"{pair['a']} - {pair['b']}: {pair['mean_difference']:+,.0f} "
            f"+/- {pair['ci95']:,.0f}   p = {pair['p_value']:.2g}"
        )
    return "\n".join(lines)
