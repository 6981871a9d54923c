"""``tune noise``'s measurement: how noisy a config's fitness is, and what that means for the
games per candidate and the choice of strategy.

Two measurements, both on seeds apart from training and validation:

- the initial point over many games: the per-game spread of the fitness, and the games a
  candidate needs for a target standard error (the standard error of a mean over n games is
  sd / sqrt(n), so n = (sd / (target * mean))**2);
- the run's first generation, each candidate on the games the strategy gives it: how much the
  candidates really differ, against how much their measured fitness is noise. What CMA-ES learns
  from a generation is the order of its candidates, so what matters is how well the measured
  order follows the true one: the correlation of measured with true fitness across candidates,
  ``spread / sqrt(spread**2 + sd**2 / n)`` with n games each (the candidates' true spread and
  the per-game noise, from the generation itself). The candidates differ less as the step size
  shrinks (in proportion to it, or faster near an optimum), so later generations need more games
  than the first: a quarter of the step size, at least 16 times the games.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from engine.stats import Z95, counted, interval, readable
from tuner.config import AUTO, RunConfig
from tuner.config.limits import MAX_GAMES
from tuner.errors import ConfigError
from tuner.games.fitness import Fitness
from tuner.games.seeds import noise_seeds
from tuner.space import SearchSpace

RELIABLE_RANKING = 0.9  # the correlation of measured with true fitness that ranks reliably
SHRINK = 4  # how far the step size shrinks in a run, for the games later generations need


@dataclass(frozen=True)
class Measured:
    """What ``measure`` played: the initial point, and the first generation's candidates (none
    when it was skipped), with the population that generation had."""

    start: Fitness
    candidates: tuple[Fitness, ...]
    popsize: int


def recommend_games(mean: float, per_game_sd: float, target: float) -> int | None:
    """Games per candidate so that sd / sqrt(n) <= target * |mean| (mean must not be 0); None
    where that is more than a config may ask (``MAX_GAMES``), a tiny target's infinity included."""
    if per_game_sd == 0:
        return 1
    root = per_game_sd / (target * abs(mean)) if target * abs(mean) > 0 else math.inf
    if root > math.sqrt(MAX_GAMES):  # also keeps the square below float's overflow
        return None
    return max(1, min(MAX_GAMES, math.ceil(root**2)))


def candidate_spread(candidates: tuple[Fitness, ...]) -> float:
    """The standard deviation of the candidates' true fitness: the variance of their measured
    fitness less its share of noise (each one's squared standard error); 0 where noise explains
    it all."""
    observed = statistics.variance(c.value for c in candidates)
    noise = statistics.fmean(c.stderr**2 for c in candidates)
    return math.sqrt(max(0.0, observed - noise))


def per_game_spread(candidates: tuple[Fitness, ...]) -> float:
    """The per-game standard deviation pooled over the candidates."""
    return math.sqrt(statistics.fmean(c.stderr**2 * c.games for c in candidates))


def rank_correlation(spread: float, per_game_sd: float, games: int) -> float:
    """The correlation of measured with true fitness across candidates that differ by
    ``spread`` and play ``games`` games each with per-game noise ``per_game_sd``."""
    if spread == 0:
        return 0.0
    return spread / math.hypot(spread, per_game_sd / math.sqrt(games))


def games_for_correlation(spread: float, per_game_sd: float, correlation: float) -> int | None:
    """The fewest games per candidate whose ``rank_correlation`` reaches ``correlation``; None
    when the candidates do not differ measurably (no number of games orders them)."""
    if spread == 0:
        return None
    ratio = correlation**2 / (1 - correlation**2)
    return max(1, math.ceil(ratio * (per_game_sd / spread) ** 2))


def measure(config: RunConfig, games: int, generation_games: int,
            progress: bool = True) -> Measured:
    """The config's initial point over ``games`` games and, unless ``generation_games`` is 0,
    its first generation (the candidates the run would ask first, ``cmaes.popsize: auto``
    resolved for the CPUs at hand) over ``generation_games`` games each, on the config's Ray,
    counted by a progress bar (lines off a terminal) unless not ``progress``; ``ConfigError``
    when the initial point's fitness is 0 (no relative noise)."""
    # the engine and Ray, once the config is known good: only to keep start-up fast
    from tuner.cluster.ray_evaluator import evaluator_for
    from tuner.games.evaluation import Job
    from tuner.games.fitness import score_fitness
    from tuner.games.progress import GameBar
    from tuner.loop.run import new_strategy, popsize_for

    space = SearchSpace(config.params)
    with evaluator_for(config.ray, [config.family], start_ray=False,
                       engines=config.shipped) as evaluator:
        if config.cmaes.popsize == AUTO:
            cpus = evaluator.workers
            config = config.with_popsize(popsize_for(config, cpus), cpus)
        jobs = [Job(0, config.player(space.weights(space.initial())),
                    tuple(noise_seeds(config.run.seed, games)))]
        if generation_games:
            seeds = tuple(noise_seeds(config.run.seed, generation_games))
            xs = new_strategy(config, space).ask()
            jobs += [Job(i + 1, config.player(space.weights(x)), seeds) for i, x in enumerate(xs)]
        total = sum(len(job.seeds) for job in jobs)
        with GameBar("noise", total, enabled=progress) as bar:
            results = evaluator.play(jobs, bar.update)
    fitness = [score_fitness(r, config.evaluation.fitness, **config.evaluation.fitness_options)
               for r in results]
    if fitness[0].value == 0:
        raise ConfigError(f"{config.source}: evaluation.fitness: the initial point's fitness is 0 "
                          f"over {fitness[0].games} games; no relative noise to measure (try "
                          "another fitness or initial point)")
    return Measured(fitness[0], tuple(fitness[1:]), config.popsize)


def format_noise(config: RunConfig, measured: Measured, target: float) -> str:
    """What the measured noise means for the config's games per candidate and its strategy."""
    from engine.families import get_family  # numpy code: only to keep start-up fast

    fit = measured.start
    per_game_sd = fit.stderr * math.sqrt(fit.games)
    player = (f"engine {config.engine.declared.name}" if config.engine else
              get_family(config.family).name)
    lines = [
        f"initial point of {config.source}: {player} at depth {config.search.depth}",
        (f"fitness ({config.evaluation.fitness}) over {fit.games:,} games: "
         f"{readable(fit.value)} {interval(Z95 * fit.stderr, fit.games)}"),
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
    shown = f"{target:.1%}" if target >= 0.001 else f"{100 * target:.2g}%"  # never "0.0%"
    games = (f"{needed:,}" if needed is not None else
             f"more than {MAX_GAMES:,}, the most evaluation.games allows: out of reach")
    if not measured.candidates:  # the one recommendation there is
        lines.append(f"recommended games per candidate for a {shown} standard error: {games}")
        return "\n".join(lines)
    # a measure, not advice: comparing two players needs it, ranking candidates (what CMA-ES
    # learns from) needs what the first generation's lines say, and they give the advice
    lines.append(f"games per candidate for a {shown} standard error of its mean: {games} (what "
                 "comparing two players needs; ranking candidates, below)")
    lines += format_generation(config, measured, budget.first)
    return "\n".join(lines)


def format_generation(config: RunConfig, measured: Measured, configured: int) -> list[str]:
    """The first generation's lines: how reliably the configured games rank its candidates,
    the games that rank them reliably, and what that says about the strategy."""
    candidates = measured.candidates
    played = candidates[0].games
    spread = candidate_spread(candidates)
    noise_sd = per_game_spread(candidates)
    mean = statistics.fmean(c.value for c in candidates)
    reliable = games_for_correlation(spread, noise_sd, RELIABLE_RANKING)
    strategy = config.strategy.name
    lines = [
        (f"first generation ({strategy}): {counted(len(candidates), 'candidate')} x "
         f"{counted(played, 'game')}, mean {readable(mean)}; their true fitness differs by sd "
         f"{readable(spread)} ({spread / abs(mean):.3f} x mean; an estimate from "
         f"{len(candidates)} candidates), one game's by sd {readable(noise_sd)}"),
        (f"rank correlation (measured against true fitness) at {counted(configured, 'game')} "
         f"per candidate: {rank_correlation(spread, noise_sd, configured):.2f}"),
    ]
    if reliable is None:
        lines.append(
            f"ranks: the candidates do not differ measurably over {played:,} games each, so the "
            "first generation is ranked by noise alone: a larger cmaes.sigma0 makes candidates "
            "differ more, and strategy 'population' learns from more candidates when ranks are "
            "noise")
        return lines
    later = reliable * SHRINK**2
    lines.append(
        f"games per candidate for a rank correlation of {RELIABLE_RANKING}: {reliable:,} now "
        f"({counted(reliable * measured.popsize, 'game')} a generation of {measured.popsize}); "
        f"at least {later:,} once the step size is 1/{SHRINK} of sigma0 (candidates differ in "
        "proportion to it, or less near an optimum)")
    if later <= configured:
        lines.append(f"ranks: reliable at the configured {configured:,} games, now and once "
                     f"the step size has shrunk {SHRINK}-fold: fixed games rank well")
    elif reliable <= configured:
        lines.append(
            f"ranks: reliable at the configured {configured:,} games now, but not once the step "
            "size has shrunk; measured, that is no reason for more games: at depths 1 and 2, 64 "
            "fixed games reached a validated target for less than racing or a larger "
            "'population' (docs/studies/strategies.md): CMA-ES learns more from more "
            "generations of noisier ranks")
    else:
        lines.append(
            f"ranks: unreliable at the configured {configured:,} games from the first "
            f"generation: play about {reliable:,} each (evaluation.games: {reliable:,}), or let "
            "CMA-ES average the noise over more candidates (strategy 'population')")
    return lines
