"""``tune positions build``: sample positions from a player's games and label each with a deeper
search (``tuner.analysis.positions``); ``tune positions show FILE``: what a position set holds,
where it came from and what it cost."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from dataclasses import asdict
from pathlib import Path

from engine.atomic import check_kind, check_untracked, unused_path
from engine.depth import chosen_depth, parse_depth, to_yaml
from engine.stats import readable
from tuner import commands
from tuner.cli.options import (
    MAX_GAMES,
    UsageError,
    check_cutoff,
    check_depth,
    check_int,
    command_with,
    ray_options,
    read_family_weights,
    search_options,
    trusted_families,
    with_options,
)
from tuner.config import RaySection

MAX_EVERY = 1_000_000


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    positions = subparsers.add_parser(
        "positions", parents=[common], help="build and inspect position sets",
        description="Position sets: positions sampled from a player's games, each labelled "
                    "with a deeper search's value of every move and with how its game went "
                    "(docs/positions.md).")
    actions = positions.add_subparsers(dest="positions_command", metavar="ACTION",
                                       required=True)
    build = actions.add_parser(
        "build", parents=[common, search_options("the player's search (default: its file's)"),
                          ray_options(), trusted_families()],
        help="play a player's games, take positions and label them with an oracle",
        description="Play GAMES games with the player's weights, take each position with "
                    "probability 1/EVERY, and value every legal move of each with the oracle's "
                    "weights at ORACLE_DEPTH. Run again with the same options, it adds only "
                    "the games OUTPUT lacks.")
    build.add_argument("--player", required=True, metavar="FILE",
                       help="the weights file (or baseline) whose games positions come from")
    build.add_argument("--oracle", required=True, metavar="FILE",
                       help="the weights file (or baseline) whose search labels the positions")
    build.add_argument("--oracle-depth", required=True, metavar="POLICY",
                       help="the oracle's search: a depth, auto:cap=N or nodes:N")
    build.add_argument("--games", type=int, required=True, metavar="N",
                       help=f"games to take positions from, 1 to {MAX_GAMES:,}")
    build.add_argument("--every", type=int, default=10, metavar="K",
                       help="take each position with probability 1/K (default 10)")
    build.add_argument("--seed", type=int, default=1, metavar="S",
                       help="the set's seed, from which its games' seeds derive (default 1)")
    build.add_argument("--output", "-o", required=True, metavar="FILE",
                       help="the position set file (.npz) to write, or to complete")
    build.set_defaults(handler=build_set)
    score = actions.add_parser(
        "score", parents=[common, search_options("the search each file is scored at (default: "
                                                 "its own)"), trusted_families()],
        help="score weights files on a position set by every objective",
        description="Score each weights file on a position set by every objective "
                    "(docs/positions.md): regret and agreement of its search's moves with the "
                    "oracle's values, and the fit of its heuristic to how the games went.")
    score.add_argument("path", metavar="SET", help="a position set file")
    score.add_argument("weights", nargs="+", metavar="FILE",
                       help="weights files (or baselines' names) to score")
    score.add_argument("--json", action="store_true", help="machine-readable output")
    score.set_defaults(handler=score_files)
    show = actions.add_parser("show", parents=[common], help="say what a position set holds",
                              description="What a position set holds, where it came from and "
                                          "what building it cost.")
    show.add_argument("path", metavar="FILE", help="a position set file")
    show.add_argument("--json", action="store_true", help="machine-readable output")
    show.set_defaults(handler=show_set)


def check_args(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any file is read or Ray starts."""
    check_int("--games", args.games, 1, MAX_GAMES)
    check_int("--every", args.every, 1, MAX_EVERY)
    check_int("--seed", args.seed, 0, 2**64 - 1)
    args.depth = check_depth(args.depth)
    check_cutoff(args.cutoff)
    try:
        args.oracle_depth = parse_depth(args.oracle_depth)
    except ValueError as err:
        raise UsageError(f"--oracle-depth: {err}") from None
    check_kind(args.output)
    args.ray = with_options(RaySection.from_values("tune positions build"), args)


def build_set(args: argparse.Namespace) -> int:
    check_args(args)
    player = read_family_weights(args.player, args)
    oracle = read_family_weights(args.oracle, args)
    # numpy: once the arguments are known good
    from engine.positions.sampling import PositionSampler
    from engine.solver import PlayerSpec

    sampler = PositionSampler(
        PlayerSpec(player.family, player.weights, chosen_depth(args.depth, player.depth),
                   args.cutoff),
        PlayerSpec(oracle.family, oracle.weights, args.oracle_depth, args.cutoff), args.every)
    from tqdm import tqdm  # the evaluator (Ray) and the bar only now, to keep start-up fast

    from tuner.analysis.positions import PositionBuild
    from tuner.cluster.ray_evaluator import evaluator_for

    build = PositionBuild(args.output, sampler, args.seed, args.games)
    missing = build.missing
    if missing:  # the file will change: not a committed one
        check_untracked(args.output, _build_elsewhere(args))
    try:
        with evaluator_for(args.ray, [player.family, oracle.family], start_ray=False) as \
                evaluator, tqdm(total=len(missing), unit="game", file=sys.stderr, disable=None,
                                leave=False) as bar:
            built = build.run(evaluator, bar.update)
    except KeyboardInterrupt:  # the last line, "tune: interrupted", is the command's
        print(f"{len(build.held):,} of {args.games:,} games are kept in {args.output}; go on "
              f"with:\n  {commands.tune(*args.argv)}", file=sys.stderr)
        raise
    cost = built.cost
    print(f"wrote {args.output}: {built.positions:,} positions from {built.games:,} games "
          f"({build.reused:,} of them there already), labelled by {oracle.family} at "
          f"depth {to_yaml(args.oracle_depth)}; it cost {readable(cost['player_cpu'] + cost['oracle_cpu'], 3)} "
          "CPU-seconds in all")
    return 0


def _build_elsewhere(args: argparse.Namespace) -> str:
    """What the refusal of a committed ``--output`` says to run: the same build onto a copy of
    the set in the current directory, so that its games are not played again."""
    copy = str(unused_path(Path(args.output).name))
    return (f"build on a copy of it: {shlex.join(['cp', args.output, copy])} && "
            f"{command_with(args, '--output', copy)}")


def score_files(args: argparse.Namespace) -> int:
    args.depth = check_depth(args.depth)
    check_cutoff(args.cutoff)
    loaded = [read_family_weights(path, args) for path in args.weights]
    # numpy: once the arguments are known good
    from engine.positions.objectives import OBJECTIVES
    from engine.positions.set_file import read_positions
    from engine.solver import Solver

    positions = read_positions(args.path)
    if not positions.complete:
        raise UsageError(f"{args.path}: holds {positions.games:,} of its {positions.planned:,} "
                         "games: finish it first with the tune positions build command that "
                         "began it")
    rows = []
    for path, weights in zip(args.weights, loaded):
        solver = Solver(weights.family, weights.weights, chosen_depth(args.depth, weights.depth),
                        args.cutoff)
        rows.append({"weights": path, "depth": to_yaml(solver.depth), **{
            name: asdict(objective.score(solver, positions))
            for name, objective in OBJECTIVES.items()}})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    names = list(OBJECTIVES)
    print(f"{positions.positions:,} positions of {positions.games:,} games; +/- is one standard "
          "error, games as the samples")
    print(f"{'weights':<32} {'depth':>5} " + " ".join(f"{name:>20}" for name in names))
    for row in rows:
        cells = " ".join(f"{readable(row[n]['value'], 3):>9} +/- {readable(row[n]['stderr'], 2):<6}"
                         for n in names)
        print(f"{row['weights']:<32} {row['depth']!s:>5} {cells}".rstrip())
    return 0


def show_set(args: argparse.Namespace) -> int:
    from engine.positions.set_file import read_positions  # numpy: only now

    found = read_positions(args.path)
    summary = {**found.header(), "complete": found.complete, "positions": found.positions,
               "games": found.games, "cost": found.cost}
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    sampler = found.sampler
    cost = found.cost
    lines = [
        (f"{args.path}: {found.positions:,} positions from {found.games:,} of {found.planned:,} "
        f"games{'' if found.complete else ' (incomplete: build it again to add the rest)'}"),
        (f"player: {sampler['player']['family']} at depth {sampler['player']['depth']}, a "
        f"position taken with probability 1/{sampler['every']}; games from set seed "
        f"{found.seed}"),
        f"oracle: {sampler['oracle']['family']} at depth {sampler['oracle']['depth']}",
        (f"cost: {cost['player_positions']:,} positions searched playing and "
        f"{cost['oracle_positions']:,} labelling, {readable(cost['player_cpu'], 3)} and "
        f"{readable(cost['oracle_cpu'], 3)} CPU-seconds"),
        f"built by tune2048 {found.tune2048}",
    ]
    print("\n".join(lines))
    return 0
