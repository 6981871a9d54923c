"""``tune noise``: measure fitness noise at a config's initial point before spending hours.

Plays the initial weights on ``--games`` games, reports the per-game spread of the configured
fitness, and recommends how many games per candidate give a target standard error (relative to the
mean) in a generation. The standard error of a mean over n games is sd / sqrt(n), so
n = (sd / (target * mean))**2.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

from engine.families import get_family
from engine.usage import MAX_GAMES, MAX_WORKERS, UsageError, check_int
from tuner.config import load_config
from tuner.errors import ConfigError
from tuner.seeds import noise_seeds
from tuner.space import SearchSpace


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "noise",
        help="measure fitness noise at a config's initial point; recommend games per candidate",
    )
    parser.add_argument("--config", metavar="FILE", help="run config (required)")
    parser.add_argument("--games", type=int, default=200,
                        help=f"games to play, 2 to {MAX_GAMES} (default 200)")
    parser.add_argument("--target", type=float, default=0.02,
                        help="target standard error relative to the mean (default 0.02)")
    parser.add_argument("--workers", type=int,
                        help=f"local Ray workers, 1 to {MAX_WORKERS} (default: the config's, "
                             "or all cores)")
    parser.set_defaults(handler=run)


def recommend_games(mean: float, per_game_sd: float, target: float) -> int:
    """Games per candidate so that sd / sqrt(n) <= target * |mean| (mean must not be 0)."""
    return max(1, math.ceil((per_game_sd / (target * abs(mean))) ** 2))


def run(args: argparse.Namespace) -> int:
    if args.config is None:
        raise UsageError("--config FILE is required: tune noise --config FILE")
    check_int("--games", args.games, 2, MAX_GAMES)
    check_int("--workers", args.workers, 1, MAX_WORKERS)
    if not 0 < args.target < 1:  # also refuses NaN
        raise UsageError(f"--target must be in (0, 1), got {args.target}")
    config = load_config(args.config)
    from engine.solver import PlayerSpec  # the engine, once the arguments are known good
    from tuner.evaluation import Job, evaluator_for
    from tuner.fitness import score_fitness

    space = SearchSpace(config)
    spec = PlayerSpec(config.family, space.weights(space.initial()), config.search.depth,
                      config.search.cutoff)
    ray = dataclasses.replace(config.ray, workers=args.workers or config.ray.workers)
    with evaluator_for(ray, [config.family]) as evaluator:
        [results] = evaluator.play([Job(0, spec, tuple(noise_seeds(config.run.seed, args.games)))])
    fit = score_fitness(results, config.evaluation.fitness, **config.evaluation.fitness_options)
    if fit.value == 0:
        raise ConfigError(f"{config.source}: evaluation.fitness: the initial point's fitness is 0 "
                          f"over {fit.games} games; no relative noise to measure (try another "
                          "fitness or initial point)")
    per_game_sd = fit.stderr * math.sqrt(fit.games)
    needed = recommend_games(fit.value, per_game_sd, args.target)
    print(f"initial point of {config.source}: {get_family(config.family).name} at depth "
          f"{config.search.depth}")
    print(f"fitness ({config.evaluation.fitness}) over {fit.games} games: {fit.value:,.4g} "
          f"+/- {fit.stderr:,.3g} (standard error)")
    print(f"per-game spread: sd {per_game_sd:,.4g} = {per_game_sd / abs(fit.value):.2f} x mean")
    budget = config.evaluation.games
    counts = {"": budget.first} if budget.first == budget.most else {
        " (min)": budget.first, " (max)": budget.most}
    for label, games in counts.items():
        print(f"configured games per candidate{label}: {games} -> relative standard error "
              f"{per_game_sd / math.sqrt(games) / abs(fit.value):.3f}")
    print(f"recommended games per candidate for a {args.target:.1%} standard error: {needed}")
    return 0
