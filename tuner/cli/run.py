"""``tune run CONFIG`` (short form: ``tune --config CONFIG``): start a tuning run.

The run is written beside its run directory until its first checkpoint and then takes its
place (``tuner.store.run_dir``): a run directory that holds a run is refused unless ``--overwrite`` is
given, and even then left intact until the new run has a checkpoint; one that holds results
without a checkpoint (a shipped result) or other files is never replaced. ``--dry-run`` prints
the run's price and starts nothing.
"""

from __future__ import annotations

import argparse

from tuner.api.job import start_run
from tuner.cli import job
from tuner.cli.options import ray_options
from tuner.config import RunConfig


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "run", parents=[common, ray_options()], help="start a tuning run from a YAML config",
        description="Start a tuning run: CMA-ES proposes weights, games on Ray score them, the "
                    "best are validated and written to RUN_DIR/best.yaml (RUN_DIR is the "
                    "config's run.output_dir/run.name).")
    parser.add_argument("config", metavar="CONFIG", help="run config (see configs/snake.yaml)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the run in the run directory, once the new run has "
                             "written its first checkpoint")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the run's price (games, CPU-hours, wall time) and exit: "
                             "nothing is written and Ray is not started")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    launch = job.launch(args)
    config = launch.load()
    if args.dry_run:
        return dry_run(config)
    return start_run(config, launch, progress=job.show_progress(args)).exit_code


def dry_run(config: RunConfig) -> int:
    """Print the price of a run of ``config`` (``tuner.analysis.price``), at the game time the
    run itself prices at as it starts (``tuner.analysis.timing``: recorded by an earlier run
    of it in its run directory, or measured now); nothing is written and Ray is not started."""
    # the price and the engine, to time games: only for --dry-run (start-up)
    from tuner.analysis import price, timing
    from tuner.cluster.ray_evaluator import plays_here

    here = plays_here(config.ray, rough_seconds=price.rough_cpu_seconds_left(config))
    cpus = 1 if here else price.default_cpus(config.ray.workers)
    result = price.price(config, cpus, timing.game_time(config), here=here)
    where = (" (in this process: too small to pay for Ray's start; --workers N plays it on Ray)"
             if here else _where(config))
    for line in price.report(result, cpus, config, where):
        print(line)
    return 0


def _where(config: RunConfig) -> str:
    if config.ray.address is not None:
        return f" (the cluster at {config.ray.address} is not asked: --workers N prices N CPUs)"
    return "" if config.ray.workers else " (this machine's cores)"
