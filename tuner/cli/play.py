"""``tune play``: play games with a weights file or a family's defaults, watch one, or advise a move.

Games are played by the tuner's evaluator (``tuner.cluster.ray_evaluator.evaluator_for``): in this process by
default, on local Ray workers with ``--workers N``, or on a cluster with ``--address``. The engine
(numba, the compiled kernels) and Ray are imported when games are played, not when the command
line is read, so bad arguments are refused at once.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import TYPE_CHECKING

from engine.depth import DepthPolicy, chosen_depth
from engine.echo import shorten
from engine.weights_file import read_weights
from tuner.cli.options import (
    MAX_GAMES,
    UsageError,
    check_cutoff,
    check_depth,
    check_int,
    check_seed_range,
    engine_command,
    engine_options,
    ray_options,
    read_family_weights,
    search_options,
    trusted_families,
    with_options,
)
from tuner.config import RaySection

if TYPE_CHECKING:
    from engine.external.player import EnginePlayer
    from engine.solver import PlayerSpec

PROGRESS_MIN_GAMES = 20
MAX_DELAY = 60.0  # seconds between moves with --watch
MAX_BOARD_TEXT = 120  # characters of --board: 16 tiles of up to 5 digits, separators, spaces


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "play",
        parents=[common, search_options("search depth (default: the weights file's, or 1)"),
                 ray_options("1: the games play in this process, without Ray"),
                 trusted_families(), engine_options()],
        help="play games with tuned weights, watch a game, or advise a move",
        description="Play expectimax games with a weights file (or a family's default weights).",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--weights", metavar="FILE",
                        help="weights file to load, or a baseline's name (classic-reference)")
    source.add_argument(
        "--family", metavar="SPEC",
        help="play a family's default weights: a name (tune families), module:Class or "
             "file.py:Class",
    )
    parser.add_argument("--games", type=int, default=10, metavar="N",
                        help=f"number of games, 1 to {MAX_GAMES:,} (default 10)")
    parser.add_argument("--seed", type=int, default=0,
                        help="game i plays seed SEED + i, a 64-bit seed (default 0)")
    parser.add_argument("--watch", action="store_true", help="show one game's board as it goes")
    parser.add_argument(
        "--delay", type=float, default=0.05, metavar="SECONDS",
        help=f"seconds between moves with --watch, 0 to {MAX_DELAY:g} (default 0.05)",
    )
    parser.add_argument(
        "--board", metavar="ROWS", help='advise a move: tiles row by row, "2 0 0 2 / 0 4 0 0 / ..."'
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=handle, workers=1)


def check_args(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any file is read or the engine is loaded (``UsageError``)."""
    args.depth = check_depth(args.depth, engine=args.engine is not None)
    check_cutoff(args.cutoff)
    check_int("--games", args.games, 1, MAX_GAMES)
    check_seed_range(args.seed, args.games)
    args.ray = with_options(RaySection.from_values("tune play"), args)
    if not (math.isfinite(args.delay) and 0.0 <= args.delay <= MAX_DELAY):
        raise UsageError(f"--delay must be from 0 to {MAX_DELAY:g} seconds, got {args.delay}")
    if args.board is not None and len(args.board) > MAX_BOARD_TEXT:
        raise UsageError(f"--board must be 4 rows of 4 tiles (\"2 0 0 2 / 0 4 0 0 / ...\"), got "
                         f"{len(args.board)} characters: {shorten(repr(args.board))}")
    args.engine = engine_command(args)
    if args.engine is not None:
        given = [option for option, value in (("--family", args.family), ("--watch", args.watch),
                                              ("--board", args.board)) if value]
        if given:
            raise UsageError(f"{given[0]} is not for an external engine: the protocol plays "
                             "whole games (tune play --engine COMMAND [--weights FILE])")


def build_spec(args: argparse.Namespace) -> PlayerSpec | EnginePlayer:
    """The player the arguments describe; raises bad input in one line naming the weights file
    (or the family, or the engine) and, for weights whose heuristic is not finite, the weight to
    blame."""
    if args.engine is not None:
        from engine.external.player import engine_player  # numpy: once the input is known good

        loaded = read_weights(args.weights) if args.weights else None
        return engine_player(args.engine, loaded, args.weights or "--engine", args.depth)
    family, weights, depth = _player(args)
    from engine.solver import PlayerSpec  # the engine, once the input is known good

    return PlayerSpec(family, weights, chosen_depth(args.depth, depth), args.cutoff)


def _player(args: argparse.Namespace) -> tuple[str, dict[str, float], DepthPolicy]:
    """The family, weights and depth of ``--weights``, or of ``--family``'s defaults at depth 1,
    their heuristic checked finite."""
    # here only to keep start-up fast: the engine's families are numpy code
    from engine import finite
    from engine.families import FamilyNotFound, get_family
    from engine.families.registry import canonical_spec

    if args.weights:
        loaded = read_family_weights(args.weights, args)
        return loaded.family, loaded.weights, loaded.depth
    spec = canonical_spec(args.family or "classic")
    try:
        family = get_family(spec)
    except FamilyNotFound as err:
        raise FamilyNotFound(f"--family: {err}") from None
    finite.check_weights_from(f"--family {args.family or 'classic'}", spec, family.defaults())
    return spec, family.defaults(), 1


def handle(args: argparse.Namespace) -> int:
    check_args(args)
    from engine.board import parse_board_text  # here only to keep start-up fast (numpy)

    board = None if args.board is None else parse_board_text(args.board)
    spec = build_spec(args)
    # the engine, Ray and the bar, once the arguments are known good: only to keep start-up fast
    from engine.stats import summarize
    from tuner.analysis import play
    from tuner.cluster.ray_evaluator import evaluator_for
    from tuner.games.evaluation import Job
    from tuner.games.progress import GameBar

    if board is not None:
        return play.advise(spec, board)
    if args.watch:
        return play.watch(spec, args.seed, args.delay)
    seeds = [args.seed + i for i in range(args.games)]
    with GameBar("play", len(seeds), file=sys.stderr,
                 enabled=len(seeds) >= PROGRESS_MIN_GAMES and not args.quiet) as bar:
        started = time.perf_counter()
        with evaluator_for(args.ray, [None if args.engine else spec.family],
                           start_ray=False) as evaluator:
            [results] = evaluator.play([Job(0, spec, tuple(seeds))], bar.update)
        wall = time.perf_counter() - started
    summary = summarize(results)
    if args.json:
        print(json.dumps(play.summary_dict(spec, summary, wall), indent=2))
    else:
        print(play.format_summary(spec, summary, wall))
    return 0
