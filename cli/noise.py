"""``tune noise --config FILE``: measure fitness noise at a config's initial point before
spending hours, and recommend games per candidate (``tuner.noise``)."""

from __future__ import annotations

import argparse
import dataclasses

from cli.options import MAX_GAMES, UsageError, check_int, check_ray, ray_options
from tuner.config import load_config


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "noise",
        parents=[common, ray_options("the config's, or all cores")],
        help="measure fitness noise at a config's initial point; recommend games per candidate",
        description="Play a config's initial weights and say how noisy its fitness is.",
    )
    parser.add_argument("--config", metavar="FILE", help="run config (required)")
    parser.add_argument("--games", type=int, default=200, metavar="N",
                        help=f"games to play, 2 to {MAX_GAMES:,} (default 200)")
    parser.add_argument("--target", type=float, default=0.02,
                        help="target standard error relative to the mean (default 0.02)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    check_int("--games", args.games, 2, MAX_GAMES)
    check_ray(args)
    if not 0 < args.target < 1:  # also refuses NaN
        raise UsageError(f"--target must be in (0, 1), got {args.target}")
    if args.config is None:
        raise UsageError("--config FILE is required: tune noise --config FILE")
    config = load_config(args.config)
    from tuner import noise

    ray = dataclasses.replace(config.ray, workers=args.workers or config.ray.workers,
                              address=args.address or config.ray.address)
    fit = noise.measure(config, args.games, ray)
    print(noise.format_noise(config, fit, args.target))
    return 0
