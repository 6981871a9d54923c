"""A run's price on the command line: ``tune run CONFIG --dry-run`` prints it and starts
nothing; every run says it in one line once it knows its CPUs (``tuner.analysis.price``)."""

from __future__ import annotations

import argparse

from engine.stats import counted
from tuner import commands
from tuner.analysis import price
from tuner.config import RunConfig


def dry_run(config: RunConfig, args: argparse.Namespace) -> int:
    """Print the price of a run of ``config``, at game times recorded by an earlier run of it
    in its run directory, or measured now; nothing is written and Ray is not started."""
    from tuner.cluster.ray_evaluator import plays_here  # the engine's code: games follow

    here = plays_here(config.ray, rough_seconds=price.rough_cpu_seconds(config))
    cpus = 1 if here else price.default_cpus(config.ray.workers)
    game_time = (price.recorded_game_time(config.run_dir, config)
                 or price.measured_game_time(config))
    result = price.price(config, cpus, game_time, here=here)
    where = (" (in this process: too small to pay for Ray's start; --workers N plays it on Ray)"
             if here else _where(config))
    for line in price.report(result, cpus, config, where):
        print(line)
    return 0


def _where(config: RunConfig) -> str:
    if config.ray.address is not None:
        return f" (the cluster at {config.ray.address} is not asked: --workers N prices N CPUs)"
    return "" if config.ray.workers else " (this machine's cores)"


def first_line(run, cpus: int, here: bool = False) -> str:
    """The price of what is left of ``run`` on ``cpus`` CPUs (``here``: in this process), in one
    line: at the game time its own generations recorded when it has played some (a resumed
    run), else the rough one for its depth (a run plays no game to price itself)."""
    config, state = run.config, run.state
    game_time = (price.recorded(state.cluster, state.games, "recorded by this run")
                 or price.rough_game_time(config))
    if game_time is None:  # an external engine's, before it has played
        games = price.most_games(config, cpus).total
        return (f"price: at most {counted(games, 'game')}; the game time of {config.player_name} "
                f"is known after a generation (measured now by: "
                f"{commands.tune('--config', config.source, '--dry-run')})")
    result = price.price(config, cpus, game_time, state.games, here)
    return price.summary(result, cpus, config, "price of what is left" if state.games else "price")
