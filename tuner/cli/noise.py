"""``tune noise --config FILE``: measure fitness noise at a config's initial point and in its
first generation before spending hours, and say what it means for the games per candidate and
the strategy (``tuner.analysis.noise``)."""

from __future__ import annotations

import argparse

from engine.echo import shorten
from tuner.cli.options import (
    MAX_GAMES,
    UsageError,
    add_config_options,
    check_int,
    ray_options,
    with_options,
)
from tuner.config import load_config


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "noise",
        parents=[common, ray_options("the config's, or all cores")],
        help="measure fitness noise; recommend games per candidate and say how reliable ranks are",
        description=("Play a config's initial weights and its first generation, and say how "
                     "noisy its fitness is and how reliably its games rank the candidates."),
    )
    parser.add_argument("--config", metavar="FILE", help="run config (required)")
    add_config_options(parser, "search", what="search depth (default: the config's search.depth)")
    parser.add_argument("--games", type=int, default=200, metavar="N",
                        help=f"games of the initial point, 2 to {MAX_GAMES:,} (default 200)")
    parser.add_argument("--generation-games", type=int, metavar="N",
                        help=("games each candidate of the first generation plays, 2 to "
                              f"{MAX_GAMES:,}, or 0 to skip it (default: the config's games per "
                              "candidate, the least under racing)"))
    parser.add_argument("--target", type=float, default=0.02,
                        help="target standard error relative to the mean (default 0.02)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    check_int("--games", args.games, 2, MAX_GAMES)
    if args.generation_games not in (None, 0) and not 2 <= args.generation_games <= MAX_GAMES:
        raise UsageError(f"--generation-games must be 0 (skip) or from 2 to {MAX_GAMES:,}, got "
                         f"{shorten(str(args.generation_games))}")
    if not 0 < args.target < 1:  # also refuses NaN
        raise UsageError(f"--target must be in (0, 1), got {args.target}")
    if args.config is None:
        raise UsageError("--config FILE is required: tune noise --config FILE")
    config = with_options(load_config(args.config), args)  # --depth, --workers, --address
    from tuner.analysis import noise  # games' code: once the config is known good (start-up)

    generation_games = args.generation_games
    if generation_games is None:  # what the run's first generation plays (a game alone: no spread)
        generation_games = max(2, config.evaluation.games.first)
    measured = noise.measure(config, args.games, generation_games, progress=not args.quiet)
    print(noise.format_noise(config, measured, args.target))
    return 0
