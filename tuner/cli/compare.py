"""``tune compare A.yaml B.yaml ...``: every weights file plays the same seeds on Ray; per file
and per pair, what ``tuner.analysis.compare`` reports."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from engine.atomic import check_untracked, unused_path
from engine.depth import chosen_depth
from engine.weights_file import read_weights
from tuner import commands
from tuner.analysis.compare import MIN_GAMES, build_report, format_report, labels_for
from tuner.cli.options import (
    MAX_GAMES,
    UsageError,
    check_cutoff,
    check_depth,
    check_int,
    check_not_engine,
    check_seed_range,
    command_with,
    engine_command,
    engine_options,
    ray_options,
    search_options,
    trusted_families,
    with_options,
)
from tuner.config import RaySection


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "compare",
        parents=[common, search_options("search depth for every file (default: each file's own)"),
                 ray_options(), trusted_families(), engine_options()],
        help="play weights files on the same seeds and test their differences",
        description="Play every weights file on the same seeds and test their differences with "
                    "a paired t-test.",
    )
    parser.add_argument("weights", nargs="+", metavar="FILE",
                        help="weights files (or baselines' names) to compare")
    parser.add_argument("--games", type=int, default=200, metavar="N",
                        help=f"games per file, {MIN_GAMES} to {MAX_GAMES:,} (default 200)")
    parser.add_argument("--seed", type=int, default=10**9,
                        help="game i plays seed SEED + i, a 64-bit seed (default 1e9, away from "
                             "tuning seeds)")
    parser.add_argument("--save", metavar="FILE",
                        help="keep every game in FILE as it finishes; run again, the games "
                             "FILE holds are not played again")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=handle)


def check_args(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any file is read or Ray starts."""
    if args.games < MIN_GAMES:
        raise UsageError(f"--games must be at least {MIN_GAMES} for a paired test, got "
                         f"{args.games}")
    check_int("--games", args.games, MIN_GAMES, MAX_GAMES)
    args.depth = check_depth(args.depth, engine=args.engine is not None)
    check_cutoff(args.cutoff)
    check_seed_range(args.seed, args.games)
    if args.save == "":
        raise UsageError("--save needs a file name")
    args.ray = with_options(RaySection.from_values("tune compare"), args)
    args.engine = engine_command(args)


def handle(args: argparse.Namespace) -> int:
    check_args(args)
    from engine import finite  # here only to keep start-up fast (numpy)

    loaded = [read_weights(path, args.family_file, family_modules=args.family_module)
              for path in args.weights]
    for path, weights in zip(args.weights, loaded):
        if args.engine is None:
            check_not_engine(path, weights)
            finite.check_weights_from(path, weights.family, weights.weights)
    # the engine and the tuner, once the arguments are known good: only to keep start-up fast
    from engine.external.player import engine_player
    from engine.solver import PlayerSpec
    from tuner.games.evaluation import Job
    from tuner.games.saved_games import SavedGames, player

    labels = labels_for(args.weights)
    seeds = tuple(args.seed + i for i in range(args.games))
    jobs = [
        Job(i, engine_player(args.engine, w, path, args.depth) if args.engine else
            PlayerSpec(w.family, w.weights, chosen_depth(args.depth, w.depth), args.cutoff),
            seeds)
        for i, (path, w) in enumerate(zip(args.weights, loaded))
    ]
    saved = None if args.save is None else SavedGames(args.save, [job.spec for job in jobs])
    if saved is None:
        results = play(jobs, loaded, args)
    else:
        reused = saved.count(seeds)
        to_play = []
        for job in jobs:  # a player named twice (one file twice, or two copies) plays once
            missing = saved.missing(job.candidate, seeds)
            if missing and all(player(job.spec) != player(other.spec) for other in to_play):
                to_play.append(Job(job.candidate, job.spec, missing))
        if to_play:  # the file will change: not a committed one
            check_untracked(saved.path, _save_elsewhere(args))
        try:
            play(to_play, loaded, args, lambda j, games: saved.add(to_play[j].candidate, games))
        except KeyboardInterrupt:  # the last line, "tune: interrupted", is the command's
            saved.flush()
            print(f"{saved.count(seeds):,} of {len(jobs) * len(seeds):,} games are kept in "
                  f"{args.save}; go on with:\n  {commands.tune(*args.argv)}",
                  file=sys.stderr)
            raise
        finally:  # every game that came back is kept, whatever stopped the comparison
            saved.flush()
        results = [saved.results(job.candidate, seeds) for job in jobs]
        # on stderr: stdout is the report, which --json keeps machine-readable
        print(f"{args.save}: {reused:,} of {len(jobs) * len(seeds):,} games reused from it, "
              f"{sum(len(job.seeds) for job in to_play):,} played now and added",
              file=sys.stderr)
    report = build_report(labels, jobs, results)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def play(jobs: list, loaded: list, args: argparse.Namespace, on_results=None) -> list:
    """Every job's games (on Ray, unless one local worker plays them here; none started for no
    job), with a progress bar on a terminal."""
    if not jobs:
        return []
    # games to play: only now the evaluator (Ray) and the bar, to keep start-up fast
    from tqdm import tqdm

    from tuner.cluster.ray_evaluator import evaluator_for
    from tuner.games.evaluation import SerialEvaluator, rough_cpu_seconds_of_jobs

    with evaluator_for(args.ray, [w.family for w in loaded], start_ray=False,
                       rough_seconds=rough_cpu_seconds_of_jobs(jobs)) as evaluator, \
            tqdm(total=sum(len(job.seeds) for job in jobs), unit="game", file=sys.stderr,
                 disable=None, leave=False) as bar:
        if args.ray.workers is None and isinstance(evaluator, SerialEvaluator) and \
                not args.quiet:
            print(f"games in this process: fewer than starting Ray would pay for; on Ray: "
                  f"{on_ray(args)}", file=sys.stderr)
        return evaluator.play(jobs, bar.update, on_results)


def on_ray(args: argparse.Namespace) -> str:
    """The command line ``args`` came from with ``--workers``: the same games, played on Ray."""
    from tuner.cluster.ray_evaluator import ON_RAY_WORKERS  # loaded already: games were played

    argv = list(args.argv)
    at = argv.index("--") if "--" in argv else len(argv)
    return commands.tune(*argv[:at], "--workers", str(ON_RAY_WORKERS), *argv[at:])


def _save_elsewhere(args: argparse.Namespace) -> str:
    """What the refusal of a committed ``--save`` file says to run: the same comparison, saving
    to a copy of the file in the current directory, so its games are not played again."""
    copy = str(unused_path(Path(args.save).name))
    return (f"save to a copy of it: {shlex.join(['cp', args.save, copy])} && "
            f"{command_with(args, '--save', copy)}")
