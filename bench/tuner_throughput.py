"""Tuner throughput: games per second of a short tuning run on Ray, against one plain process.

A short run (classic family, the config below) is first played in one process without Ray and
timed over its generations after the first; then, for each worker count, the same run on an
embedded Ray (the trajectory is identical, so the games are the same), with its first generation
again a warm-up that loads the compiled engine in every worker. Printed per worker count:

- tuner games/s and its efficiency against workers x the single process (the target is 90%);
- a plain process pool playing the same units with the same generation barriers: what the
  machine itself allows, so that tuner / pool isolates Ray's own overhead from the hardware's
  (shared caches, hyperthreads, turbo) when many cores are busy.

Run: ``python bench/tuner_throughput.py --workers 1 2``, and with adaptive games (the races'
rounds are barriers too, with fewer units each): ``... --adaptive 64 512``.

Documented seams only (docs/architecture.md, docs/extending.md): ``parse_config``,
``TuningRun.start`` and ``step``, ``evaluator_for``, the in-process ``SerialEvaluator`` and the
``Schedule`` it runs, ``DISPATCHES``; the pool plays with ``PlayerSpec.solver()``.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import multiprocessing
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tuner.cluster.ray_evaluator import evaluator_for
from tuner.config import parse_config
from tuner.games.evaluation import SerialEvaluator
from tuner.games.policy import DISPATCHES
from tuner.loop.run import TuningRun


def config(depth: int, games: int | dict, popsize: int, generations: int, games_per_task,
           dispatch: str = "pipelined"):
    document = {
        "run": {"name": "throughput", "seed": 3},
        "family": "classic",
        "params": {
            "monotonicity_weight": {"init": 47, "low": 1, "high": 1000, "scale": "log"},
            "merges_weight": {"init": 700, "low": 10, "high": 10000, "scale": "log"},
            "empty_weight": {"init": 270, "low": 10, "high": 10000, "scale": "log"},
        },
        "search": {"depth": depth},
        "evaluation": {"games": games},
        "cmaes": {"sigma0": 0.1, "popsize": popsize, "max_generations": generations},
        "ray": {"games_per_task": games_per_task, "dispatch": dispatch},
    }
    return parse_config(document, "bench")


def warm_up(run: TuningRun, evaluator) -> None:
    """Play the first generation untimed: it loads the compiled engine in every worker."""
    run.step(evaluator)


def timed_generations(run: TuningRun, generations: int) -> tuple[int, float]:
    """Games and seconds of the next ``generations`` generations."""
    games_before = run.state.games
    started = time.perf_counter()
    for _ in range(generations):
        run.step()
    return run.state.games - games_before, time.perf_counter() - started


class RecordingEvaluator(SerialEvaluator):
    """The in-process backend, keeping the units the schedule hands out at each step (a
    generation's first games, then each race round) for the pool baseline."""

    def __init__(self, games_per_task: int):
        super().__init__(games_per_task)
        self.rounds: list[list[tuple]] = []

    def run(self, jobs, schedule, progress=None):
        def keep(units):
            self.rounds.append([(jobs[u.job].spec, u.seeds) for u in units])

        return super().run(jobs, _Recorded(schedule, keep), progress)


class _Recorded:
    """A schedule whose hand-outs are also given to ``keep``."""

    def __init__(self, schedule, keep):
        self._schedule = schedule
        self._keep = keep

    def __getattr__(self, name):
        return getattr(self._schedule, name)

    def next_units(self, idle, size):
        units = self._schedule.next_units(idle, size)
        self._keep(units)
        return units


@functools.cache
def player(spec):
    """A pool process's player for ``spec``, built once, as a worker keeps it."""
    return spec.solver()


def play(unit: tuple) -> int:
    """The unit's games, played in this pool process; how many."""
    spec, seeds = unit
    return len([player(spec).play(seed) for seed in seeds])


def pool_rate(rounds: list[list[tuple]], warm_up: int, workers: int) -> float:
    """Games per second of a process pool over the same units, with the same barriers; the first
    ``warm_up`` rounds (the tuner's first generation) are played untimed."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, context) as pool:
        for units in rounds[:warm_up]:
            list(pool.map(play, units))
        started = time.perf_counter()
        games = sum(sum(pool.map(play, units)) for units in rounds[warm_up:])
        return games / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--games", type=int, default=384, help="games per candidate")
    parser.add_argument("--adaptive", type=int, nargs=2, metavar=("MIN", "MAX"),
                        help="adaptive games instead (batches of MIN)")
    parser.add_argument("--popsize", type=int, default=12)
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--games-per-task", default="16",
                        type=lambda v: v if v == "auto" else int(v))
    parser.add_argument("--dispatch", choices=DISPATCHES, default="pipelined")
    args = parser.parse_args()
    games = {"min": args.adaptive[0], "max": args.adaptive[1]} if args.adaptive else args.games
    cfg = config(args.depth, games, args.popsize, args.generations, args.games_per_task,
                 args.dispatch)
    print(f"classic family, depth {args.depth}, popsize {args.popsize}, "
          f"{cfg.evaluation.games.describe()}, {args.games_per_task} games per task, "
          f"{args.dispatch} dispatch, "
          f"{os.cpu_count()} CPUs")

    with tempfile.TemporaryDirectory() as tmp:
        serial_run = TuningRun.start(cfg, Path(tmp) / "serial", progress=False)
        recorder = RecordingEvaluator(args.games_per_task)
        warm_up(serial_run, recorder)
        warm_up_rounds = len(recorder.rounds)
        games, seconds = timed_generations(serial_run, args.generations - 1)
        single = games / seconds
        print(f"single process (no Ray): {games} games in {seconds:.1f} s = {single:,.1f} games/s")
        print(f"{'workers':>7} {'tuner games/s':>14} {'ideal':>9} {'efficiency':>11} "
              f"{'pool games/s':>13} {'tuner/pool':>11}")
        for workers in args.workers:
            run = TuningRun.start(cfg, Path(tmp) / f"w{workers}", progress=False)
            ray = dataclasses.replace(cfg.ray, workers=workers)
            with evaluator_for(ray, [cfg.family]) as evaluator:
                warm_up(run, evaluator)
                games_w, seconds_w = timed_generations(run, args.generations - 1)
            assert run.state.history == serial_run.state.history  # same games, same trajectory
            rate = games_w / seconds_w
            ideal = workers * single
            pool = pool_rate(recorder.rounds, warm_up_rounds, workers)
            print(f"{workers:>7} {rate:>14,.1f} {ideal:>9,.1f} {rate / ideal:>10.1%} "
                  f"{pool:>13,.1f} {rate / pool:>10.1%}")


if __name__ == "__main__":
    main()
