"""``tune compare A.yaml B.yaml ...``: every weights file plays the same seeds on Ray; per file
and per pair, what ``tuner.analysis.compare`` reports. ``--sequential``: two files, a candidate
then its baseline, play pairs in seed order until the sequential test
(``tuner.analysis.sequential``) decides, or ``--games`` pairs are played."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from pathlib import Path

from engine.atomic import check_untracked, unused_path
from engine.depth import chosen_depth
from engine.weights_file import read_weights
from tuner import commands
from tuner.analysis.compare import (
    MIN_GAMES,
    build_report,
    format_report,
    labels_for,
    sequential_report,
)
from tuner.analysis.sequential import ALPHA, BETA, Judge, Margin, SequentialTest, SettingError
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
                    "a paired t-test; with --sequential, play a candidate and its baseline "
                    "until a sequential test decides whether the candidate gains.",
    )
    parser.add_argument("weights", nargs="+", metavar="FILE",
                        help="weights files (or baselines' names) to compare")
    parser.add_argument("--games", type=int, default=200, metavar="N",
                        help=f"games per file (with --sequential, the most), {MIN_GAMES} to "
                             f"{MAX_GAMES:,} (default 200)")
    parser.add_argument("--seed", type=int, default=10**9,
                        help="game i plays seed SEED + i, a 64-bit seed (default 1e9, away from "
                             "tuning seeds)")
    parser.add_argument("--save", metavar="FILE",
                        help="keep every game in FILE as it finishes; run again, the games "
                             "FILE holds are not played again")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    test = parser.add_argument_group(
        "sequential test", "two files, a candidate then its baseline: pairs are played in seed "
                           "order until the test decides whether the first gains over the "
                           "second, or --games pairs are played (docs/statistics.md)")
    test.add_argument("--sequential", action="store_true",
                      help="stop as soon as the sequential test decides")
    test.add_argument("--gain", metavar="MARGIN",
                      help="what counts as a gain: points (5000) or a percentage of the "
                           "baseline's mean (5%%)")
    test.add_argument("--no-gain", metavar="MARGIN",
                      help="what counts as no gain, in the same unit (default 0)")
    test.add_argument("--alpha", type=float, metavar="RATE",
                      help=f"the error rate of a gain found where there is none, in (0, 0.5) "
                           f"(default {ALPHA:g})")
    test.add_argument("--beta", type=float, metavar="RATE",
                      help=f"the error rate of no gain found where there is one, in (0, 0.5) "
                           f"(default {BETA:g})")
    parser.set_defaults(handler=handle)


TEST_OPTIONS = {"gain": "--gain", "no_gain": "--no-gain", "alpha": "--alpha", "beta": "--beta"}


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
    args.test = sequential_test(args)
    args.ray = with_options(RaySection.from_values("tune compare"), args)
    args.engine = engine_command(args)


def sequential_test(args: argparse.Namespace) -> SequentialTest | None:
    """The test ``--sequential`` and its settings ask for (None: a comparison of fixed length);
    ``UsageError`` naming the option that is wrong."""
    given = [option for dest, option in TEST_OPTIONS.items() if getattr(args, dest) is not None]
    if not args.sequential:
        if given:
            raise UsageError(f"{given[0]} needs --sequential")
        return None
    if len(args.weights) != 2:
        raise UsageError(f"--sequential compares two weights files, a candidate then its "
                         f"baseline, got {len(args.weights)}")
    if args.gain is None:
        raise UsageError("--sequential needs --gain: what counts as a gain, in points (5000) "
                         "or in percent of the baseline's mean (5%)")
    gain = _margin("--gain", args.gain)
    # by default 0 in the gain's unit, as the report then shows it
    no_gain = Margin(0.0, gain.percent) if args.no_gain is None else _margin("--no-gain",
                                                                            args.no_gain)
    try:
        return SequentialTest(gain, no_gain, ALPHA if args.alpha is None else args.alpha,
                              BETA if args.beta is None else args.beta)
    except SettingError as err:
        raise UsageError(f"{TEST_OPTIONS[err.setting]}: {err.reason}") from None


def _margin(option: str, text: str) -> Margin:
    """``option``'s margin; ``UsageError`` naming it where ``text`` is no margin."""
    try:
        return Margin.parse(text)
    except ValueError as err:
        raise UsageError(f"{option}: {err}") from None


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
    from tuner.games.schedule import AllGames

    labels = labels_for(args.weights)
    seeds = tuple(args.seed + i for i in range(args.games))
    jobs = [
        Job(i, engine_player(args.engine, w, path, args.depth) if args.engine else
            PlayerSpec(w.family, w.weights, chosen_depth(args.depth, w.depth), args.cutoff),
            seeds)
        for i, (path, w) in enumerate(zip(args.weights, loaded))
    ]
    saved = None if args.save is None else SavedGames(args.save, [job.spec for job in jobs])
    if args.test is not None:
        report = judge(jobs, loaded, labels, saved, args)
    elif saved is None:
        report = build_report(labels, jobs, play(jobs, loaded, args, AllGames(
            [job.seeds for job in jobs])))
    else:
        reused = saved.count(seeds)
        to_play = []
        for job in jobs:  # a player named twice (one file twice, or two copies) plays once
            missing = saved.missing(job.candidate, seeds)
            if missing and all(player(job.spec) != player(other.spec) for other in to_play):
                to_play.append(Job(job.candidate, job.spec, missing))
        if to_play:  # the file will change: not a committed one
            check_untracked(saved.path, _save_elsewhere(args))
        with keeping(saved, seeds, f"{len(jobs) * len(seeds):,}", args):
            play(to_play, loaded, args, AllGames(
                [job.seeds for job in to_play],
                lambda j, games: saved.add(to_play[j].candidate, games)))
        # on stderr: stdout is the report, which --json keeps machine-readable
        print(f"{args.save}: {reused:,} of {len(jobs) * len(seeds):,} games reused from it, "
              f"{sum(len(job.seeds) for job in to_play):,} played now and added",
              file=sys.stderr)
        report = build_report(labels, jobs, [saved.results(job.candidate, seeds)
                                             for job in jobs])
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


def judge(jobs: list, loaded: list, labels: list[str], saved, args: argparse.Namespace
          ) -> dict:
    """``--sequential``: the two jobs play their seeds in step until the test decides on the
    seed-ordered prefix of finished pairs (``tuner.games.prefix``), or every seed is played;
    the games ``saved`` holds count and are not played again. The report of the decided
    prefix, with the verdict."""
    # the tuner's schedule, once the arguments are known good: only to keep start-up fast
    from tuner.games.evaluation import Job
    from tuner.games.prefix import PrefixGames

    seeds = jobs[0].seeds
    judged = Judge(args.test, len(seeds))
    held = [{} for _ in jobs] if saved is None else [
        held_games(saved, job.candidate, seeds) for job in jobs]
    reused = sum(map(len, held))
    schedule = PrefixGames([job.seeds for job in jobs], lambda rows: judged.extend(
        (candidate.score, baseline.score) for candidate, baseline in rows), held,
        None if saved is None else saved.add)
    if not schedule.done:
        if saved is not None:  # the file will change: not a committed one
            check_untracked(saved.path, _save_elsewhere(args))
        with keeping(saved, seeds, f"at most {len(jobs) * len(seeds):,}", args):
            play(jobs, loaded, args, schedule, len(jobs) * len(seeds) - reused)
    if saved is not None:  # on stderr: stdout is the report
        played = sum(map(len, schedule.received)) - reused
        print(f"{args.save}: {reused:,} games reused from it, {played:,} played now and added",
              file=sys.stderr)
    verdict = judged.verdict
    pairs = verdict.pairs
    results = [games[:pairs] for games in schedule.results()]
    report = build_report(labels, [Job(job.candidate, job.spec, seeds[:pairs]) for job in jobs],
                          results)
    finished = sum(map(len, schedule.received)) - len(jobs) * pairs
    report["sequential"] = sequential_report(args.test, verdict, labels, len(seeds), finished,
                                             schedule.in_flight)
    return report


def held_games(saved, job: int, seeds: tuple[int, ...]) -> dict:
    """The games of ``seeds`` that ``saved`` holds for the comparison's ``job``, by index."""
    missing = set(saved.missing(job, seeds))
    indices = [i for i, seed in enumerate(seeds) if seed not in missing]
    return dict(zip(indices, saved.results(job, [seeds[i] for i in indices])))


@contextlib.contextmanager
def keeping(saved, seeds: tuple[int, ...], of: str, args: argparse.Namespace):
    """Every game that comes back is kept in ``saved`` (None: no ``--save``), whatever stops
    the games; Ctrl-C says how many (``of`` how many in all) and the command that goes on."""
    if saved is None:
        yield
        return
    try:
        yield
    except KeyboardInterrupt:  # the last line, "tune: interrupted", is the command's
        saved.flush()
        print(f"{saved.count(seeds):,} of {of} games are kept in {args.save}; go on with:\n"
              f"  {commands.tune(*args.argv)}", file=sys.stderr)
        raise
    finally:
        saved.flush()


def play(jobs: list, loaded: list, args: argparse.Namespace, schedule,
         total: int | None = None) -> list:
    """What ``schedule`` hands out of the jobs' games (on Ray, unless one local worker plays
    them here; none started for no job), with a progress bar. ``total``: the most games it may
    play, where it may stop before (default: every job's seeds)."""
    if not jobs:
        return []
    # games to play: only now the evaluator (Ray) and the bar, to keep start-up fast
    from tuner.cluster.ray_evaluator import evaluator_for
    from tuner.games.evaluation import SerialEvaluator, rough_cpu_seconds_of_jobs
    from tuner.games.progress import GameBar

    games = sum(len(job.seeds) for job in jobs) if total is None else total
    with evaluator_for(args.ray, [w.family for w in loaded], start_ray=False,
                       rough_seconds=rough_cpu_seconds_of_jobs(jobs)) as evaluator, \
            GameBar("compare", games, up_to=total is not None, enabled=not args.quiet,
                    file=sys.stderr) as bar:
        if args.ray.workers is None and isinstance(evaluator, SerialEvaluator) and \
                not args.quiet:
            print(f"games in this process: fewer than starting Ray would pay for; on Ray: "
                  f"{on_ray(args)}", file=sys.stderr)
        return evaluator.run(jobs, schedule, bar.update)


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
