"""``tune noise``'s measurement: fitness noise at a config's initial point, and the games per
candidate that reach a target standard error.

Plays the initial weights on a number of games, reports the per-game spread of the configured
fitness, and recommends how many games per candidate give a target standard error (relative to the
mean) in a generation. The standard error of a mean over n games is sd / sqrt(n), so
n = (sd / (target * mean))**2.
"""

from __future__ import annotations

import math

from engine.stats import Z95, readable
from tuner.config import RaySection, RunConfig
from tuner.errors import ConfigError
from tuner.fitness import Fitness
from tuner.seeds import noise_seeds
from tuner.space import SearchSpace


def recommend_games(mean: float, per_game_sd: float, target: float) -> int:
    """Games per candidate so that sd / sqrt(n) <= target * |mean| (mean must not be 0)."""
    return max(1, math.ceil((per_game_sd / (target * abs(mean))) ** 2))


def measure(config: RunConfig, games: int, ray: RaySection) -> Fitness:
    """The fitness of the config's initial point over ``games`` noise-measuring games (seeds
    apart from training and validation); ``ConfigError`` when it is 0 (no relative noise)."""
    from engine.solver import PlayerSpec  # the engine, once the arguments are known good
    from tuner.evaluation import Job, evaluator_for
    from tuner.fitness import score_fitness

    space = SearchSpace(config)
    spec = PlayerSpec(config.family, space.weights(space.initial()), config.search.depth,
                      config.search.cutoff)
    with evaluator_for(ray, [config.family]) as evaluator:
        [results] = evaluator.play([Job(0, spec, tuple(noise_seeds(config.run.seed, games)))])
    fit = score_fitness(results, config.evaluation.fitness, **config.evaluation.fitness_options)
    if fit.value == 0:
        raise ConfigError(f"{config.source}: evaluation.fitness: the initial point's fitness is 0 "
                          f"over {fit.games} games; no relative noise to measure (try another "
                          "fitness or initial point)")
    return fit


def format_noise(config: RunConfig, fit: Fitness, target: float) -> str:
    """What the measured noise means for the config's games per candidate."""
    from engine.families import get_family

    per_game_sd = fit.stderr * math.sqrt(fit.games)
    lines = [
        (f"initial point of {config.source}: {get_family(config.family).name} at depth "
         f"{config.search.depth}"),
        (f"fitness ({config.evaluation.fitness}) over {fit.games:,} games: "
         f"{readable(fit.value)} +/- {readable(Z95 * fit.stderr)} (95% confidence interval)"),
        (f"per-game spread: sd {readable(per_game_sd)} = {per_game_sd / abs(fit.value):.2f} x "
         "mean"),
    ]
    budget = config.evaluation.games
    counts = {"": budget.first} if budget.first == budget.most else {
        " (min)": budget.first, " (max)": budget.most}
    for label, games in counts.items():
        lines.append(f"configured games per candidate{label}: {games:,} -> relative standard "
                     f"error {per_game_sd / math.sqrt(games) / abs(fit.value):.3f}")
    needed = recommend_games(fit.value, per_game_sd, target)
    lines.append(f"recommended games per candidate for a {target:.1%} standard error: "
                 f"{needed:,}")
    return "\n".join(lines)
