"""``tune play``: play games with a weights file or a family's defaults, watch one, or advise a move.

Games are played by the tuner's evaluator (``tuner.evaluation.evaluator_for``): in this process by
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

from engine import finite
from engine.board import format_board, parse_board_text
from engine.defaults import DEFAULT_CUTOFF, MILESTONES
from engine.families import FamilyNotFound, get_family
from engine.families.registry import canonical_spec
from engine.usage import (
    MAX_GAMES,
    MAX_WORKERS,
    UsageError,
    check_address,
    check_cutoff,
    check_int,
    check_seed_range,
    shorten,
)
from engine.weights_file import MAX_DEPTH, read_weights
from tuner.config import RaySection

if TYPE_CHECKING:
    from engine.solver import PlayerSpec
    from engine.stats import Summary

PROGRESS_MIN_GAMES = 20
MAX_DELAY = 60.0  # seconds between moves with --watch
MAX_BOARD_TEXT = 120  # characters of --board: 16 tiles of up to 5 digits, separators, spaces


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play games with tuned weights, watch a game, or advise a move",
        description="Play expectimax games with a weights file (or a family's default weights).",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--weights", metavar="FILE", help="weights file to load")
    source.add_argument(
        "--family", metavar="SPEC",
        help="play a family's default weights: a name (tune families), module:Class or "
             "file.py:Class",
    )
    parser.add_argument(
        "--family-file", action="append", default=[], metavar="PY",
        help="allow the weights file's family to be imported from this file (a weights file "
             "alone never runs code)",
    )
    parser.add_argument(
        "--depth", type=int, help="search depth (default: the weights file's, or 1)"
    )
    parser.add_argument(
        "--cutoff", type=float, default=DEFAULT_CUTOFF,
        help="probability cutoff, in [0, 1) (0: exact)",
    )
    parser.add_argument("--games", type=int, default=10,
                        help=f"number of games, 1 to {MAX_GAMES} (default 10)")
    parser.add_argument("--seed", type=int, default=0,
                        help="game i plays seed SEED + i, a 64-bit seed (default 0)")
    parser.add_argument("--workers", type=int, default=1,
                        help=f"local Ray workers, 1 to {MAX_WORKERS} (default 1: the games play "
                             "in this process, without Ray)")
    parser.add_argument("--address", help="play on a Ray cluster: 'auto' or HOST:PORT")
    parser.add_argument("--watch", action="store_true", help="show one game's board as it goes")
    parser.add_argument(
        "--delay", type=float, default=0.05,
        help=f"seconds between moves with --watch, 0 to {MAX_DELAY:g} (default 0.05)",
    )
    parser.add_argument(
        "--board", metavar="ROWS", help='advise a move: tiles row by row, "2 0 0 2 / 0 4 0 0 / ..."'
    )
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=run)


def check_args(args: argparse.Namespace) -> None:
    """Refuse bad arguments before any file is read or the engine is loaded (``UsageError``)."""
    check_int("--depth", args.depth, 0, MAX_DEPTH)
    check_cutoff(args.cutoff)
    check_int("--games", args.games, 1, MAX_GAMES)
    check_seed_range(args.seed, args.games)
    check_int("--workers", args.workers, 1, MAX_WORKERS)
    check_address(args.address)
    if not (math.isfinite(args.delay) and 0.0 <= args.delay <= MAX_DELAY):
        raise UsageError(f"--delay must be from 0 to {MAX_DELAY:g} seconds, got {args.delay}")
    if args.board is not None and len(args.board) > MAX_BOARD_TEXT:
        raise UsageError(f"--board must be 4 rows of 4 tiles (\"2 0 0 2 / 0 4 0 0 / ...\"), got "
                         f"{len(args.board)} characters: {shorten(repr(args.board))}")


def build_spec(args: argparse.Namespace) -> PlayerSpec:
    """The player the arguments describe; raises a ``ValueError`` subclass with a one-line
    message: ``UsageError``, ``WeightsFileError``, ``FamilyNotFound``, or ``HeuristicError``
    naming the weights file (or the family) and the weight whose heuristic is not finite."""
    check_args(args)
    if args.weights:
        loaded = read_weights(args.weights, args.family_file)
        depth = loaded.depth if args.depth is None else args.depth
        finite.check_weights_from(args.weights, loaded.family, loaded.weights)
        from engine.solver import PlayerSpec  # the engine, once the input is known good

        return PlayerSpec(loaded.family, loaded.weights, depth, args.cutoff)
    spec = canonical_spec(args.family or "classic")
    try:
        family = get_family(spec)
    except FamilyNotFound as err:
        raise FamilyNotFound(f"--family: {err}") from None
    finite.check_weights_from(f"--family {args.family or 'classic'}", spec, family.defaults())
    from engine.solver import PlayerSpec  # the engine, once the input is known good

    return PlayerSpec(spec, family.defaults(), 1 if args.depth is None else args.depth,
                      args.cutoff)


def run(args: argparse.Namespace) -> int:
    check_args(args)
    board = None if args.board is None else parse_board_text(args.board)
    spec = build_spec(args)
    from tqdm import tqdm

    from engine.stats import summarize
    from tuner.evaluation import Job, evaluator_for

    if board is not None:
        return advise(spec, board)
    if args.watch:
        return watch(spec, args.seed, args.delay)
    seeds = [args.seed + i for i in range(args.games)]
    with tqdm(
        total=len(seeds),
        unit="game",
        disable=len(seeds) < PROGRESS_MIN_GAMES or None,
        file=sys.stderr,
    ) as bar:
        started = time.perf_counter()
        ray = RaySection.from_values("tune play", workers=args.workers, address=args.address)
        with evaluator_for(ray, [spec.family], start_ray=False) as evaluator:
            [results] = evaluator.play([Job(0, spec, tuple(seeds))], bar.update)
        wall = time.perf_counter() - started
    summary = summarize(results)
    if args.json:
        print(json.dumps(summary_dict(spec, summary, wall), indent=2))
    else:
        print(format_summary(spec, summary, wall))
    return 0


def advise(spec: PlayerSpec, board: int) -> int:
    from engine.rules import Move

    solver = spec.solver()
    values = solver.move_values(board)
    best = solver.best_move(board)
    print(format_board(board))
    print()
    for move in Move:
        value = values[move]
        if value is None:
            shown = "illegal"
        else:  # squashed values (below the floor) are tiny: show their significant digits
            shown = f"{value:,.1f}" if abs(value) >= 1 else f"{value:.6g}"
        marker = "  <- best" if move == best else ""
        print(f"{move!s:>6}: {shown}{marker}")
    if best is None:
        print("no legal move: the game is over")
    return 0


def watch(spec: PlayerSpec, seed: int, delay: float) -> int:
    solver = spec.solver()
    interactive = sys.stdout.isatty()

    def show(board: int, move, score: int) -> None:
        if interactive:
            print("\033[H\033[J", end="")
        print(f"score {score:,}   next move: {move}")
        print(format_board(board))
        print(flush=True)
        if delay > 0:
            time.sleep(delay)

    result = solver.play(seed, on_move=show)
    print(format_board(result.final_board))
    print(f"game over: score {result.score:,}, max tile {result.max_tile}, {result.moves} moves")
    return 0


def summary_dict(spec: PlayerSpec, summary: Summary, wall: float) -> dict:
    return {
        "family": get_family(spec.family).name,
        "depth": spec.depth,
        "cutoff": spec.cutoff,
        "games": summary.games,
        "mean": summary.mean,
        "median": summary.median,
        "ci95": summary.ci95,
        "reach": {str(t): share for t, share in summary.reach.items()},
        "max_tiles": {str(t): n for t, n in summary.max_tiles.items()},
        "mean_moves": summary.mean_moves,
        "moves_per_second": summary.moves_per_second,
        "wall_seconds": wall,
    }


def format_summary(spec: PlayerSpec, summary: Summary, wall: float) -> str:
    lines = [
        f"player        {get_family(spec.family).name} at depth {spec.depth}, cutoff "
        + f"{spec.cutoff:g}",
        f"games         {summary.games}",
        f"mean score    {summary.mean:,.0f} +/- {summary.ci95:,.0f} (95% CI)",
        f"median score  {summary.median:,.0f}",
        f"moves/second  {summary.moves_per_second:,.0f} per process, {wall:.1f} s wall",
        "reached       "
        + "   ".join(f"{t}: {summary.reach[t]:.1%}" for t in MILESTONES),
        "max tile      "
        + "   ".join(f"{t}: {n}" for t, n in sorted(summary.max_tiles.items(), reverse=True)),
    ]
    return "\n".join(lines)
