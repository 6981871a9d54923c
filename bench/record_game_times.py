"""Record what the cluster benchmark (``bench/cluster_scale.py``) replays: real games of shipped
configs and their players' builds timed on one core, and Ray's own costs per task, timed on an
embedded Ray.

Games: for each config, the candidates of its first generation (CMA-ES's first draw from the
config's start) each play the first training seeds of generation 1 in this process, one game at
a time; each game's score, seconds and positions evaluated are kept, per candidate, so that the
replay's races see real differences between candidates and real spreads within one. And the
seconds a worker takes to build each candidate's player (its heuristic tables) before the games.
Run it on an otherwise idle machine: the times are what one core gives.

Ray: a task that does nothing but takes what a unit of games takes (a candidate number, a
player spec, 64 seeds, a version), submitted many times on ``--ray-cpus`` CPUs: the driver's
seconds to submit one and to fetch one result, and the CPU-seconds one occupies on a worker. And
what a task costs the driver's process in CPU time, in all and in its busiest thread (Ray's own
threads work beside the Python one: the busiest one caps the tasks a second one driver can hand
out).

Run: ``python bench/record_game_times.py`` (a few minutes; writes bench/data/game_times.json);
``--ray-only`` measures Ray again and keeps the file's games; ``--configs c-engine-d2
--games-only --out bench/data/game_times_c_engine.json`` records the C example engine's games
through the engine protocol (build it first, as examples/engines/c-engine-d2.yaml says) into a
file of their own, beside the Ray costs of game_times.json, for ``bench/cluster_scale.py --data``.
``--games N`` plays N games a candidate instead of the sizes below.

Documented seams only (docs/architecture.md, docs/extending.md): ``load_config``, a
``TuningRun`` started on a ``MemoryStore``, its strategy's ``ask`` and search space, the
generation's seeds (``tuner.games.seeds``), the in-process ``SerialEvaluator`` playing ``Job``s,
``PlayerSpec`` and ``EnginePlayer``, and Ray started by ``evaluator_for`` as ``tune`` starts it.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import statistics
import time
from pathlib import Path

from engine.atomic import atomic_write
from engine.external.player import EnginePlayer, play_games
from engine.solver import PlayerSpec
from tuner.cluster.ray_evaluator import evaluator_for
from tuner.config import load_config
from tuner.games.evaluation import Job, SerialEvaluator
from tuner.games.seeds import training_seeds
from tuner.loop.run import TuningRun
from tuner.store.store import MemoryStore

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "game_times.json"
GAMES = {"snake": 128, "classic-d2": 32, "classic-d3": 8, "c-engine-d2": 16}
DEFAULT_CONFIGS = ("snake", "classic-d2", "classic-d3")
# configs of external engines, recorded when named (--configs c-engine-d2): the engine must be
# built first, as the config's header says
ENGINE_CONFIGS = {"c-engine-d2": REPO / "examples" / "engines" / "c-engine-d2.yaml"}


def config_path(name: str) -> Path:
    """The config a record's name stands for: ``configs/NAME.yaml``, or an engine's."""
    return ENGINE_CONFIGS.get(name, REPO / "configs" / f"{name}.yaml")


def record_config(name: str, games: int) -> dict:
    """The first generation's candidates of ``configs/NAME.yaml`` (or an engine's config), each
    on ``games`` seeds."""
    config = load_config(config_path(name))
    run = TuningRun.start(config, MemoryStore(), progress=False)
    weight_sets = [run.space.weights(x) for x in run.strategy.ask()]
    seeds = tuple(training_seeds(config.run.seed, 1, games))
    jobs = [Job(i, config.player(w), seeds) for i, w in enumerate(weight_sets)]
    evaluator = SerialEvaluator(1)
    evaluator.play([Job(0, jobs[0].spec, seeds[:1])], None)  # compile and warm up, untimed
    candidates, builds = [], []
    for job in jobs:
        started = time.perf_counter()
        build(job.spec)  # what a worker does first with a candidate it has not seen
        builds.append(time.perf_counter() - started)
        results = evaluator.play([job])[0]
        candidates.append([[r.score, round(r.seconds, 6), r.moves_evaluated] for r in results])
        print(f"{name}: candidate {job.candidate}: {games} games, "
              f"{sum(r.seconds for r in results) / games * 1000:,.1f} ms a game, "
              f"{builds[-1] * 1000:.2f} ms to build its player", flush=True)
    evaluator.close()
    return {"depth": config.search.depth, "popsize": len(weight_sets),
            "budget": config.evaluation.games.to_config(),
            "build_seconds": round(statistics.median(builds), 6),
            "candidates": candidates}


def build(spec) -> None:
    """Our engine's player built (its tables), or an external engine told new values (its
    process kept: ``engine.external.player``)."""
    if isinstance(spec, EnginePlayer):
        play_games(spec, [])
    else:
        spec.solver()


def _nothing(candidate, spec, seeds, version) -> None:
    return None


def record_ray(cpus: int, tasks: int) -> dict:
    """Ray's own costs on an embedded Ray of ``cpus`` CPUs, with a task that does nothing."""
    config = load_config(config_path(DEFAULT_CONFIGS[0]))
    evaluator = evaluator_for(dataclasses.replace(config.ray, workers=cpus), [config.family])
    ray = evaluator.ray  # started as `tune` starts it
    try:
        nothing = ray.remote(num_cpus=1)(_nothing)
        spec = PlayerSpec("classic", {"monotonicity_weight": 47.0, "merges_weight": 700.0},
                          depth=3)
        unit = (0, spec, list(range(64)), "0")  # what a unit's task takes (tuner.games.evaluation)
        ray.get([nothing.remote(*unit) for _ in range(200)])  # start the workers, untimed
        started, cpu, threads = time.perf_counter(), time.process_time(), thread_seconds()
        refs = [nothing.remote(*unit) for _ in range(tasks)]
        submitted = time.perf_counter()
        ray.wait(refs, num_returns=len(refs))
        finished = time.perf_counter()
        ray.get(refs)
        fetched = time.perf_counter()
        cpu, busiest = time.process_time() - cpu, max(
            (spent - threads.get(thread, 0.0) for thread, spent in thread_seconds().items()),
            default=float("nan"))
        return {
            "recorded": datetime.date.today().isoformat(),
            "cpus": cpus,
            "driver_submit_s": (submitted - started) / tasks,
            "driver_fetch_s": (fetched - finished) / tasks,
            "worker_task_s": (finished - started) * cpus / tasks,
            "driver_cpu_s": cpu / tasks,
            "driver_busiest_thread_s": busiest / tasks,
        }
    finally:
        evaluator.close()


def thread_seconds() -> dict[str, float]:
    """CPU-seconds each thread of this process has spent (Linux's ``/proc/self/task``; empty
    elsewhere)."""
    spent = {}
    for task in Path("/proc/self/task").glob("*"):
        try:
            stat = (task / "stat").read_text(encoding="ascii")
        except OSError:  # a thread that ended meanwhile
            continue
        utime, stime = stat.rsplit(")", 1)[1].split()[11:13]  # fields 14 and 15 of proc(5)
        spent[task.name] = (int(utime) + int(stime)) / os.sysconf("SC_CLK_TCK")
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--configs", nargs="+", default=list(DEFAULT_CONFIGS))
    parser.add_argument("--games", type=int, help="games a candidate (default: by config)")
    parser.add_argument("--ray-cpus", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=5000)
    parser.add_argument("--out", default=str(DATA))
    parser.add_argument("--ray-only", action="store_true",
                        help="measure Ray's costs again, keeping the games already in --out")
    parser.add_argument("--games-only", action="store_true",
                        help="record the games of --configs into --out, a new file, with the "
                             "Ray costs of bench/data/game_times.json")
    args = parser.parse_args()
    out = Path(args.out)
    if args.ray_only:
        record = json.loads(out.read_text(encoding="utf-8"))
        record["ray"] = record_ray(args.ray_cpus, args.tasks)
    elif args.games_only:  # into a new file: the shipped one is committed, never rewritten
        record = json.loads(DATA.read_text(encoding="utf-8"))
        record["recorded"] = datetime.date.today().isoformat()
        record["configs"] = {name: record_config(name, args.games or GAMES.get(name, 32))
                             for name in args.configs}
    else:
        record = {
            "recorded": datetime.date.today().isoformat(),
            "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs",
            "configs": {name: record_config(name, args.games or GAMES.get(name, 32))
                        for name in args.configs},
            "ray": record_ray(args.ray_cpus, args.tasks),
        }
    print(json.dumps(record["ray"], indent=1))
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(out, json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
