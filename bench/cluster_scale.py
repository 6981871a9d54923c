"""Cluster scaling, replayed: how much of a cluster's CPU time goes to games, from 2 to 512 CPUs.

The tuner's own run loop (``TuningRun``), schedule (``tuner.games.schedule``) and driver loop
(``tuner.games.schedule.drive``) run here unchanged against a simulated cluster of N CPUs on a virtual
clock. What the simulation stands in for, and where each figure comes from:

- games: each takes the seconds it took when recorded on one core of this machine
  (``bench/record_game_times.py``, ``bench/data/game_times.json``), with its recorded score, so
  that races decide as they would (candidate c of every generation plays like recorded candidate
  c of the first);
- Ray: each task costs the driver the recorded seconds to submit it (its player spec and seeds
  travel inside it) and to fetch its result, and its worker the recorded seconds of a task that
  plays nothing, then, where that CPU's worker has not built the candidate's player (its
  tables) among the last 16 it built, as a worker keeps them, the recorded seconds of building
  it; a task starts on the first free CPU, in order;
- the driver's own work (CMA-ES, checks, checkpoints, the schedule's decisions) runs for real
  here, and the virtual clock advances by the real seconds it takes.

Useful CPU time is the training games that the same config plays on one CPU: speculative games
that the race then does not ask for are not useful. Share = useful / (CPUs x wall). The ceiling
is the share no scheduler can beat: a generation cannot end before its games spread over every
CPU, nor before its longest game, and the driver's work between generations comes on top.

The simulation was checked against real Ray runs once, within 2.5 points at every size tried
(docs/studies/cluster-scaling.md, with the commit whose ``--validate`` ran them).

It reaches the tuner through documented seams alone (docs/architecture.md, docs/extending.md):
``load_config`` and ``parse_config``, ``TuningRun.start`` and ``step``, the ``Evaluator`` it
stands in for, the driver loop ``drive`` with its ``Pool``, ``Unit``, ``SchedulePolicy`` and
``GameTimes``, the ``AllGames`` schedule, and ``PlayerSpec`` / ``EnginePlayer``.

Run: ``python bench/cluster_scale.py`` (a few minutes), ``--json FILE`` for the new dispatch's
shares as ``{"config": {"N": share}}``.
"""

from __future__ import annotations

import argparse
import heapq
import json
import statistics
import tempfile
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from record_game_times import config_path

from engine import GameResult
from engine.external.player import EnginePlayer
from tuner.config import load_config, parse_config
from tuner.games.policy import GameTimes, SchedulePolicy
from tuner.games.schedule import AllGames, Unit, drive
from tuner.loop.run import TuningRun

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "game_times.json"
CONFIGS = ("snake", "classic-d2", "classic-d3")
CPUS = (2, 16, 64, 128, 512)
# tune2048 0.2: every race round waits for its last task, and tasks of the shipped sizes (16
# games for a config not named)
TODAY = {"dispatch": "barrier", "games_per_task": {"snake": 16, "classic-d2": 4,
                                                   "classic-d3": 2, "c-engine-d2": 4}}
KEPT_PLAYERS = 16  # the players a worker keeps built (tuner.games.evaluation), the oldest going


class RecordedGames:
    """Results of recorded games: candidate c's game on seed s is recorded candidate
    c mod (candidates recorded)'s game s mod (games recorded)."""

    def __init__(self, record: dict):
        self.candidates = record["candidates"]

    def results(self, job, seeds) -> list[GameResult]:
        games = self.candidates[job.candidate % len(self.candidates)]
        out = []
        for seed in seeds:
            score, seconds, evaluated = games[seed % len(games)]
            out.append(GameResult(seed, score, 0, 0, seconds, evaluated, 0))
        return out

    @property
    def mean_seconds(self) -> float:
        return statistics.fmean(g[1] for c in self.candidates for g in c)


class SimulatedCluster:
    """An evaluator on a virtual clock (see the module's docstring). ``useful``: seconds of the
    games that counted; ``outside``: the driver's seconds between generations."""

    def __init__(self, cpus: int, games: RecordedGames, ray_costs: dict,
                 policy: SchedulePolicy | int | str):
        self.workers = cpus
        self.games = games
        self.costs = ray_costs
        self.policy = SchedulePolicy.of(policy)
        self.times = GameTimes()
        self.free_at = [(0.0, cpu) for cpu in range(cpus)]  # a heap: when each CPU is next free
        self.built = [OrderedDict() for _ in range(cpus)]  # each CPU's worker's players
        self.clock = 0.0
        self.useful = 0.0
        self.tasks = 0
        self.outside = 0.0  # the driver's seconds outside ``run``: between generations
        self.longest_game = 0.0
        self._real = time.perf_counter()

    def build(self, cpu: int, spec) -> float:
        """The seconds CPU ``cpu``'s worker takes to build ``spec``'s player: none where it
        keeps it among the last ``KEPT_PLAYERS`` it built. An external engine's worker keeps one
        engine process, told only the values that changed: the recorded seconds every time."""
        if isinstance(spec, EnginePlayer):
            return self.costs["build_s"]
        built = self.built[cpu]
        if spec in built:
            return 0.0
        built[spec] = None
        if len(built) > KEPT_PLAYERS:
            built.popitem(last=False)
        return self.costs["build_s"]

    def sync(self) -> float:
        """Advance the clock by the driver's real time since the simulation last had control."""
        now = time.perf_counter()
        self.clock += now - self._real
        self._real = now
        return self.clock

    def sync_outside(self) -> None:
        before = self.clock
        self.outside += self.sync() - before

    def resume_driver(self) -> None:
        """The simulation's own bookkeeping is not the driver's: the real clock restarts here."""
        self._real = time.perf_counter()

    def run(self, jobs, schedule, progress=None):
        self.sync_outside()
        depth = jobs[0].spec.depth if jobs else 1
        self.resume_driver()
        results = drive(schedule, SimulatedPool(self, jobs), self.policy, self.times, depth,
                        progress)
        self.sync()
        for job_results in results:
            self.useful += sum(r.seconds for r in job_results)
        self.resume_driver()
        return results

    def play(self, jobs, progress=None):
        return self.run(jobs, AllGames([job.seeds for job in jobs]), progress)

    def cpu_seconds(self, start: float, end: float) -> float:
        return self.workers * (end - start)  # the run's cluster.csv: this bench keeps its own

    def close(self) -> None:
        pass


@dataclass
class InFlight:
    end: float
    unit: Unit
    results: list


class SimulatedPool:
    """The ``Pool`` that ``drive`` plays a schedule's units on: CPUs of ``SimulatedCluster``."""

    def __init__(self, cluster: SimulatedCluster, jobs):
        self.cluster = cluster
        self.jobs = jobs
        self.pending: list[InFlight] = []

    def cpus(self) -> int:
        return self.cluster.workers

    def idle(self) -> int:
        c = self.cluster
        now = c.sync()
        idle = sum(1 for t, _cpu in c.free_at if t <= now)
        c.resume_driver()
        return idle

    def submit(self, unit: Unit) -> None:
        c = self.cluster
        c.sync()
        c.clock += c.costs["driver_submit_s"]
        c.tasks += 1
        results = c.games.results(self.jobs[unit.job], unit.seeds)
        seconds = sum(r.seconds for r in results)
        c.longest_game = max([c.longest_game] + [r.seconds for r in results])
        free, cpu = heapq.heappop(c.free_at)
        start = max(free, c.clock)
        build = c.build(cpu, self.jobs[unit.job].spec)
        end = start + c.costs["worker_task_s"] + build + seconds
        heapq.heappush(c.free_at, (end, cpu))
        self.pending.append(InFlight(end, unit, results))
        c.resume_driver()

    def wait(self, count: int):
        c = self.cluster
        c.sync()
        ends = sorted(p.end for p in self.pending)
        c.clock = max(c.clock, ends[min(count, len(ends)) - 1])
        finished = [p for p in self.pending if p.end <= c.clock]
        self.pending = [p for p in self.pending if p.end > c.clock]
        c.clock += c.costs["driver_fetch_s"] * len(finished)
        c.resume_driver()
        return [(p.unit, p.results) for p in finished]

    def abandon(self) -> None:
        self.pending = []  # their CPUs stay taken until they end (free_at)


def tuning_run(name: str, tmp: Path, dispatch: str, games_per_task, popsize=None) -> TuningRun:
    """``configs/NAME.yaml`` (or an engine's config) with the dispatch, task size and population
    asked for."""
    config = load_config(config_path(name))
    document = config.resolved()
    document["ray"].update(dispatch=dispatch, games_per_task=games_per_task)
    if popsize is not None:
        document["cmaes"]["popsize"] = popsize
    config = parse_config(document, name, config.run_dir)  # where resolved() names files from
    return TuningRun.start(config, tmp / f"{name}-{dispatch}-{time.monotonic_ns()}",
                           progress=False)


@dataclass
class Figures:
    popsize: int
    share: float  # useful / (CPUs x wall), over the measured generations
    wall: float  # seconds per generation
    ceiling: float
    between: float  # seconds of driver work between generations
    tasks_per_second: float  # what the driver hands out


def replay(name: str, record: dict, costs: dict, cpus: int, dispatch: str, games_per_task,
           generations: int, popsize=None) -> Figures | None:
    """The share and wall time of generations 2 to ``generations`` on a simulated cluster.
    ``popsize``: the config's unless given; ``auto`` as a run on ``cpus`` CPUs resolves it,
    or None where that is no larger than the config's. ``costs``: Ray's."""
    games = RecordedGames(record)
    costs = {"build_s": record["build_seconds"], **costs}
    with tempfile.TemporaryDirectory() as tmp:
        run = tuning_run(name, Path(tmp), dispatch, games_per_task, popsize)
        if popsize == "auto":
            run.resolve_popsize(cpus)
            if run.config.cmaes.popsize <= record["popsize"]:
                return None
        popsize = run.strategy.popsize
        cluster = SimulatedCluster(cpus, games, costs, run.config.ray.schedule)
        run.step(cluster)  # the first generation warms up the driver (compiled checks), unmeasured
        cluster.sync_outside()
        started, useful, outside = cluster.clock, cluster.useful, cluster.outside
        tasks = cluster.tasks
        longest = 0.0
        for _ in range(generations - 1):
            cluster.longest_game = 0.0
            run.step()
            longest = max(longest, cluster.longest_game)
        cluster.sync_outside()
    measured = generations - 1
    wall = (cluster.clock - started) / measured
    useful = (cluster.useful - useful) / measured
    between = (cluster.outside - outside) / measured
    floor = max(useful / cpus, longest) + between
    rate = (cluster.tasks - tasks) / (measured * wall)
    return Figures(popsize, useful / (cpus * wall), wall, useful / (cpus * floor), between, rate)


def plot(drawn: dict, cpus: list[int], path: str) -> None:
    """Share of the CPUs' time on games against CPUs, per config: today's dispatch and the new
    one (with ``popsize: auto`` where it is larger than the shipped population)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import PercentFormatter

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for (name, lines), color in zip(drawn.items(), ("C0", "C1", "C2")):
        ax.plot(cpus, lines["today"], "--o", color=color, alpha=0.6, label=f"{name}, today")
        ax.plot(cpus, lines["new"], "-o", color=color, label=f"{name}, new")
    ax.set_xscale("log", base=2)
    ax.set_xticks(cpus, [f"{n:,}" for n in cpus])
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("CPUs (simulated cluster)")
    ax.set_ylabel("share of CPU time on training games")
    ax.set_title("Filling the cluster: today's barriers against the pipelined schedule")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, ncol=2, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(DATA),
                        help="the recorded games and Ray costs (default bench/data/game_times.json)")
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS))
    parser.add_argument("--cpus", type=int, nargs="+", default=list(CPUS))
    parser.add_argument("--generations", type=int, default=4,
                        help="generations replayed per figure (the first is not measured)")
    parser.add_argument("--json", metavar="FILE", help="the new dispatch's shares, as JSON")
    parser.add_argument("--plot", metavar="FILE",
                        help="also draw share against CPUs, today and new, to FILE (PNG)")
    args = parser.parse_args()
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    costs = data["ray"]
    print(f"games recorded {data['recorded']} on {data['machine']}; Ray per task (recorded "
          f"{costs['recorded']}): driver "
          f"{(costs['driver_submit_s'] + costs['driver_fetch_s']) * 1e3:.2f} ms, worker "
          f"{costs['worker_task_s'] * 1e3:.2f} ms")
    busiest = costs["driver_busiest_thread_s"]
    print(f"the driver's process: {costs['driver_cpu_s'] * 1e3:.2f} ms of CPU a task in all its "
          + (f"threads, {busiest * 1e3:.3f} ms in the busiest (Ray's own threads work beside the "
             f"replayed one: they keep up with {1 / busiest:,.0f} tasks/s)" if busiest > 0 else
             "threads; the busiest thread's share was too small to measure (or /proc/self/task "
             "is absent)"))
    shares: dict[str, dict[str, float]] = {}
    drawn: dict[str, dict[str, list[float]]] = {}
    for name in args.configs:
        record = data["configs"][name]
        games = RecordedGames(record)
        path = config_path(name)
        budget = load_config(path).evaluation.games.describe()
        print(f"\n{path.relative_to(REPO)}: depth {record['depth']}, popsize {record['popsize']}, "
              f"{budget}, {games.mean_seconds * 1e3:,.1f} ms a game (recorded)")
        print(f"{'':>6} | {'today':^20} | {'new dispatch':^28} | "
              f"{'new, popsize auto where larger':^47}")
        print(f"{'CPUs':>6} | {'share':>6} {'s/gen':>13} | {'share':>6} {'s/gen':>9} "
              f"{'ceiling':>9} | {'popsize':>7} {'share':>6} {'s/gen':>9} {'ceiling':>9} "
              f"{'tasks/s':>7}")
        shares[name] = {}
        for cpus in args.cpus:
            today = replay(name, record, costs, cpus, TODAY["dispatch"],
                           TODAY["games_per_task"].get(name, 16), args.generations)
            new = replay(name, record, costs, cpus, "pipelined", "auto", args.generations)
            auto = replay(name, record, costs, cpus, "pipelined", "auto", args.generations,
                          popsize="auto")
            shares[name][str(cpus)] = round((auto or new).share, 4)
            for label, figures in (("today", today), ("new", auto or new)):
                drawn.setdefault(name, {}).setdefault(label, []).append(figures.share)
            print(f"{cpus:>6} | {today.share:>6.0%} {today.wall:>13,.3f} | {new.share:>6.0%} "
                  f"{new.wall:>9,.3f} {new.ceiling:>9.0%} | " + (
                      f"{auto.popsize:>7,} {auto.share:>6.0%} {auto.wall:>9,.3f} "
                      f"{auto.ceiling:>9.0%} {auto.tasks_per_second:>7,.0f}" if auto else
                      f"{'-':>7} {'':>6} {'':>9} {'':>9} {new.tasks_per_second:>7,.0f}"),
                  flush=True)
    if args.plot:
        plot(drawn, args.cpus, args.plot)
        print(f"wrote {args.plot}")
    if args.json:
        Path(args.json).write_text(json.dumps(shares, indent=1) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")


if __name__ == "__main__":
    main()
