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

``--validate`` runs the same generations on a real Ray and prints the two shares side by side:
real games on this machine's CPUs, and, at larger sizes, tasks that sleep for their recorded
seconds on ``ray.init(num_cpus=N)``. Then the driver and N worker processes share this machine's
few cores, and the simulation shares them out too: each task takes the machine's CPU time per
task, measured in the run, on one of that many cores before its games (``SimulatedCluster``'s
``cores``).

Run: ``python bench/cluster_scale.py`` (a few minutes), ``--json FILE`` for the new dispatch's
shares as ``{"config": {"N": share}}``, ``--validate`` to check the simulation against Ray.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from record_game_times import config_path, record_ray

from engine.external.player import EnginePlayer
from engine.solver import GameResult
from tuner.config import load_config, parse_config
from tuner.games.evaluation import SolverCache
from tuner.games.policy import GameTimes, SchedulePolicy
from tuner.games.schedule import AllGames, Unit, drive
from tuner.loop.run import TuningRun

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "bench" / "data" / "game_times.json"
CONFIGS = ("snake", "classic-d2", "classic-d3")
CPUS = (2, 16, 64, 128, 512)
SLEEPING_CPUS = (16, 32)  # the validation's sizes with sleeping games
CORES = os.cpu_count() or 1
# tune2048 0.2: every race round waits for its last task, and tasks of the shipped sizes
TODAY = {"dispatch": "barrier", "games_per_task": {"snake": 16, "classic-d2": 4,
                                                   "classic-d3": 2, "c-engine-d2": 4}}


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


class PlayedGames:
    """Results of games a real run played, replayed by weights and seed: a simulated run of the
    same config counts the same games (the same seeds and results give the same candidates and
    races)."""

    def __init__(self):
        self.played: dict[tuple, GameResult] = {}

    def keep(self, jobs, results) -> None:
        for job, job_results in zip(jobs, results):
            for result in job_results:
                self.played[_key(job, result.seed)] = result

    def results(self, job, seeds) -> list[GameResult]:
        """The games played; a speculative game the real run never played (its timing asked
        for others) is never counted, and stands in with the candidate's mean game time."""
        out = []
        for seed in seeds:
            if (key := _key(job, seed)) not in self.played:
                mine = [r.seconds for k, r in self.played.items() if k[0] == key[0]]
                self.played[key] = GameResult(seed, 0, 0, 0, statistics.fmean(mine), 0, 0)
            out.append(self.played[key])
        return out


def _key(job, seed: int) -> tuple:
    return tuple(sorted(job.spec.weights.items())), seed


class SimulatedCluster:
    """An evaluator on a virtual clock (see the module's docstring). ``useful``: seconds of the
    games that counted; ``busy``: seconds the CPUs were given (games and task overheads)."""

    def __init__(self, cpus: int, games: RecordedGames | PlayedGames, ray_costs: dict,
                 policy: SchedulePolicy | int | str, cores: int | None = None):
        self.workers = cpus
        self.games = games
        self.costs = ray_costs
        self.policy = SchedulePolicy.of(policy)
        self.times = GameTimes()
        self.free_at = [(0.0, cpu) for cpu in range(cpus)]  # a heap: when each CPU is next free
        self.built = [SolverCache() for _ in range(cpus)]  # each CPU's worker's players
        # ``cores``: the CPUs are worker processes on a machine of that many cores, and games
        # sleep; each task then takes ``machine_task_s`` of a core (Ray's work, every process
        # of it counted) before its games, first come first served (a heap: when each core is
        # next free). None: every CPU is a core of its own.
        self.cores_free_at = [0.0] * cores if cores else None
        self.clock = 0.0
        self.useful = 0.0
        self.tasks = 0
        self.outside = 0.0  # the driver's seconds outside ``run``: between generations
        self.longest_game = 0.0
        self._real = time.perf_counter()

    def build(self, cpu: int, spec) -> float:
        """The seconds CPU ``cpu``'s worker takes to build ``spec``'s player: none where its
        cache (``tuner.games.evaluation.SolverCache``, as a real worker's) keeps it. An external
        engine's worker keeps one engine process, told only the values that changed: the
        recorded seconds every time."""
        if isinstance(spec, EnginePlayer):
            return self.costs["build_s"]
        if spec in self.built[cpu]:
            return 0.0
        self.built[cpu].get(spec, lambda _spec: None)
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
        results = drive(schedule, _SimulatedPool(self, jobs), self.policy, self.times, depth,
                        progress)
        self.sync()
        for job_results in results:
            self.useful += sum(r.seconds for r in job_results)
        self.resume_driver()
        return results

    def play(self, jobs, progress=None):
        return self.run(jobs, AllGames([job.seeds for job in jobs]), progress)

    def close(self) -> None:
        pass


@dataclass
class _InFlight:
    end: float
    unit: Unit
    results: list


class _SimulatedPool:
    def __init__(self, cluster: SimulatedCluster, jobs):
        self.cluster = cluster
        self.jobs = jobs
        self.pending: list[_InFlight] = []

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
        if c.cores_free_at is None:
            end = start + c.costs["worker_task_s"] + build + seconds
        else:
            ray_done = max(start, heapq.heappop(c.cores_free_at)) + c.costs["machine_task_s"]
            heapq.heappush(c.cores_free_at, ray_done)
            end = ray_done + build + seconds
        heapq.heappush(c.free_at, (end, cpu))
        self.pending.append(_InFlight(end, unit, results))
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
           generations: int, popsize=None, games=None, cores=None) -> Figures | None:
    """The share and wall time of generations 2 to ``generations`` on a simulated cluster.
    ``popsize``: the config's unless given; ``auto`` as a run on ``cpus`` CPUs resolves it,
    or None where that is no larger than the config's. ``games``: the recorded ones unless
    given. ``cores``: see ``SimulatedCluster``. ``costs``: Ray's, and ``build_s`` where a
    worker's player builds cost other than the recorded ones."""
    games = games or RecordedGames(record)
    costs = {"build_s": record["build_seconds"], **costs}
    with tempfile.TemporaryDirectory() as tmp:
        run = tuning_run(name, Path(tmp), dispatch, games_per_task, popsize)
        if popsize == "auto":
            run.resolve_popsize(cpus)
            if run.config.cmaes.popsize <= record["popsize"]:
                return None
        popsize = run.strategy.popsize
        cluster = SimulatedCluster(cpus, games, costs, run.config.ray.schedule, cores)
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


def on_ray(name: str, cpus: int, generations: int, sleeping: RecordedGames | None,
           played: PlayedGames) -> tuple[float, float, float]:
    """Share of generations 2 to ``generations`` of ``configs/NAME.yaml`` on a real embedded Ray
    of ``cpus`` CPUs, as the run's own ``cluster.csv`` rows say; the driver's CPU-seconds per
    task over them (its process, Ray's threads in it included), and the machine's beyond the
    games (every process: what Ray, the tuner and the workers' player builds cost a task). The
    games are real, or (``sleeping``) tasks that sleep for the recorded games' seconds and
    return their results. Every game played goes to ``played``."""
    from tuner.cluster.ray_evaluator import RayEvaluator

    with tempfile.TemporaryDirectory() as tmp:
        run = tuning_run(name, Path(tmp), "pipelined", "auto")
        with RayEvaluator(workers=cpus, policy="auto") as evaluator:
            if sleeping is not None:  # the evaluator's own remote function, with games replaced
                evaluator._remote = evaluator.ray.remote(num_cpus=1)(_sleeper(sleeping))
                # every worker process started, the engine imported, before anything is
                # measured: Ray starts two at a time, and each takes a second or two of CPU
                # here to import the engine
                wait = evaluator.ray.remote(num_cpus=1)(_pause)
                evaluator.ray.get([wait.remote(5.0) for _ in range(cpus)])
            evaluator._remote = tasks = _Counted(evaluator._remote)
            keep, inner = played.keep, evaluator.run

            def run_and_keep(jobs, schedule, progress=None):
                results = inner(jobs, schedule, progress)
                keep(jobs, results)
                return results

            evaluator.run = run_and_keep
            run.evaluator = evaluator
            run.step()  # warms up, unmeasured
            before, machine, submitted = time.process_time(), machine_seconds(), tasks.count
            for _ in range(generations - 1):
                run.step()
            count = max(1, tasks.count - submitted)
            driver = (time.process_time() - before) / count
            machine = (machine_seconds() - machine) / count
        rows = run.state.cluster[1:]
    wall = sum(row["seconds"] for row in rows)
    games = sum(row["game_seconds"] for row in rows)
    if sleeping is None:
        machine -= games / count  # the games' own CPU-seconds
    return games / (cpus * wall), driver, machine


def machine_seconds() -> float:
    """CPU-seconds every process of this machine has spent since it started (Linux's
    ``/proc/stat``: user, nice, system, irq, softirq and steal time); NaN elsewhere."""
    try:
        fields = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()
    except OSError:
        return float("nan")
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


class _Counted:
    """A remote function that counts the tasks submitted through it."""

    def __init__(self, remote):
        self.remote_function = remote
        self.count = 0

    def remote(self, *args):
        self.count += 1
        return self.remote_function.remote(*args)


def _pause(seconds: float) -> None:
    """Start a worker process as a task will find it: the engine imported."""
    import tuner.games.evaluation  # noqa: F401

    time.sleep(seconds)


def _sleeper(games: RecordedGames):
    def sleep_unit(candidate, spec, seeds, version):
        import time as clock

        from tuner.games.evaluation import Job

        results = games.results(Job(candidate, spec, tuple(seeds)), seeds)
        clock.sleep(sum(r.seconds for r in results))
        return results

    return sleep_unit


def validate(data: dict, names: list[str], generations: int) -> None:
    """The simulation beside real Ray runs of the same configs, at sizes this machine holds."""
    print(f"\nvalidation: the simulation against real Ray on this machine "
          f"({generations - 1} generations measured, after one to warm up)")
    print(f"{'config':<12} {'CPUs':>5} {'games':<9} {'Ray':>6} {'simulated':>10} "
          f"{'difference':>11} {'driver/task':>12} {'machine/task':>13}")
    plans = [(name, 2, False) for name in names if name != "classic-d3"]
    plans += [(name, cpus, True) for name in names for cpus in SLEEPING_CPUS]
    costs = {2: data["ray"]}
    for name, cpus, sleeping in plans:
        if cpus not in costs:  # Ray's costs with this many worker processes on this machine
            costs[cpus] = record_ray(cpus, 3000)
            print(f"(Ray on {cpus} CPUs here: a task takes {costs[cpus]['worker_task_s'] * 1e3:.1f}"
                  f" ms of a worker, {costs[cpus]['driver_submit_s'] * 1e3:.2f} ms of the driver)")
        record = data["configs"][name]
        played = PlayedGames()
        recorded = RecordedGames(record) if sleeping else None
        share, driver, machine = on_ray(name, cpus, generations, recorded, played)
        # the driver's time per task as the real run spent it (Ray's calls, the schedule), and
        # the machine's beyond the games: with real games, each CPU is one of this machine's
        # cores, and a task takes that time of its CPU before its games (player builds
        # included); with sleeping games, which build nothing, the CPUs share this machine's
        # cores, and so does the simulation
        measured = dict(costs[cpus], driver_submit_s=driver, driver_fetch_s=0.0, build_s=0.0,
                        **({"machine_task_s": machine} if sleeping else
                           {"worker_task_s": machine}))
        simulated = replay(name, record, measured, cpus, "pipelined", "auto", generations,
                           games=played, cores=CORES if sleeping else None)
        print(f"{name:<12} {cpus:>5} {'sleeping' if sleeping else 'real':<9} {share:>6.0%} "
              f"{simulated.share:>10.0%} {100 * (simulated.share - share):>+10.1f} pt "
              f"{driver * 1e3:>9.2f} ms {machine * 1e3:>10.2f} ms", flush=True)
    print("(machine/task: the CPU time of every process of this machine per task, beyond its "
          "games, measured in the run; the simulation gives it to each task before its games. "
          f"Sleeping games: the driver and {'/'.join(map(str, SLEEPING_CPUS))} worker processes "
          f"share this machine's {CORES} cores, and so do the simulated tasks)")


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
    parser.add_argument("--validate", action="store_true",
                        help="compare the simulation with real Ray runs on this machine")
    args = parser.parse_args()
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    costs = data["ray"]
    print(f"games recorded {data['recorded']} on {data['machine']}; Ray per task (recorded "
          f"{costs['recorded']}): driver "
          f"{(costs['driver_submit_s'] + costs['driver_fetch_s']) * 1e3:.2f} ms, worker "
          f"{costs['worker_task_s'] * 1e3:.2f} ms")
    print(f"the driver's process: {costs['driver_cpu_s'] * 1e3:.2f} ms of CPU a task in all its "
          f"threads, {costs['driver_busiest_thread_s'] * 1e3:.3f} ms in the busiest (Ray's own "
          f"threads work beside the replayed one: they keep up with "
          f"{1 / costs['driver_busiest_thread_s']:,.0f} tasks/s)")
    if args.validate:
        return validate(data, args.configs, args.generations)
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
                           TODAY["games_per_task"][name], args.generations)
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
