"""The price of a run before it starts: the most games its config can play, the CPU time they
take at a game time, and the wall time that gives on some number of CPUs.

The method (docs/cli.md, "The price of a run"): every count is the most the config allows
(every candidate at its ``most`` games, every generation played, restarts at their largest
population), so a run costs at most this much, but for its game time, which is an estimate.
A game time comes from one of three places, and the price says which:

- *recorded*: the training games an earlier run of this config played (its ``cluster.csv``
  seconds over its games), weights drift and a busy machine included: taken as it is;
- *measured now*: a few games at the config's starting weights, timed on this process's own
  CPU clock (other processes do not inflate it), times ``run_over_start`` for its depth
  (``tuner.analysis.timing``, which chooses among the three for ``--dry-run`` and a run's own
  first lines alike); timed on a busy machine, the game time is a range (``GameTime.spread``);
- *rough*: ``UnitSize.PRIOR_SECONDS`` for the depth, where one game would take too long to
  measure.

CPU time is games times game time; the wall time on N idle CPUs is ``START_SECONDS`` plus the
CPU time over N (a generation's games keep every CPU busy: shipped runs report 99% and more of
their CPUs' time on games), but a generation's games keep no more CPUs busy than it has games,
and the final validation's no more than it has. Where more CPUs barely shorten a run, the price
says why. bench/price_fit.py sets the estimate beside shipped runs' real times.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engine.depth import DepthPolicy, rough_depth
from engine.stats import counted
from tuner.analysis.report import read_rows
from tuner.config import AUTO, START, RunConfig
from tuner.games.policy import UnitSize
from tuner.loop.run import popsize_for
from tuner.store import checkpoint as ckpt

# What a game of a run costs against one at its start on an idle core, by depth, as two factors
# measured on the shipped configs run in full (bench/price_fit.py, bench/data/price_runs.json).
# Positions: the positions a training game of the run searched against a game at the start. A
# game's positions depend only on its weights and its seed, so this factor is the same on every
# machine: tuning changes how long games last (at depth 1 the first generations' candidates,
# spread around a start that is already good, play shorter games: 0.83 to 1.04 for the four
# depth-1 configs; 0.97 and 1.09 for classic-d2 and snake-d2; deeper, tuned weights survive
# longer: 1.25 for strategies-d3's fixed64 run).
POSITIONS_RUN_OVER_START = {1: 0.90, 2: 1.03}
POSITIONS_RUN_OVER_START_DEEPER = 1.25
# Busy: a position's CPU time on a core of a machine whose every core plays games, against one on
# an idle core (the same runs' CPU-seconds a position over their start's, timed just before and
# just after each run): 0.92 to 1.30 at depth 1 on 2 cores, 1.02 and 0.97 at depth 2 (classic-d2
# and snake-d2; features-d2 not yet measured so). Deeper searches keep a transposition
# table, which suffers more from cores sharing caches: fixed64's run took 1.33 times its first
# generation's idle time a position; runs/classic-d3 (older code, 8 sittings on a shared machine)
# about 1.87. Deeper is their geometric mean, fitted on the two runs its prices are set beside.
BUSY_OVER_IDLE = {1: 1.06, 2: 1.00}
BUSY_OVER_IDLE_DEEPER = 1.58
START_SECONDS = 15.0  # Ray's start and the workers' loading of the engine, once a run
HERE_START_SECONDS = 1.0  # this process loading the engine, where a small run plays its games
CLUSTER_SIZES = (16, 64)  # besides the CPUs the run would use


@dataclass(frozen=True)
class GameCount:
    """The most games a config can play: its training (every generation at its most) and its
    validation (the final one, and the best guess every ``validation.every`` generations)."""

    generations: int
    candidates: int  # a generation's largest population
    per_candidate: int  # the most games one candidate plays in a generation
    per_generation: int  # every training game a generation can play
    training: int
    validation: int
    restarts: int
    validation_round: int = 1  # the games of the final validation, played together

    @property
    def total(self) -> int:
        return self.training + self.validation


@dataclass(frozen=True)
class GameTime:
    """The seconds one game of the run takes on one CPU of a busy machine, and where that
    figure comes from (said beside every price). ``spread``: timed while other work kept the
    machine busy, the game may take as little as ``seconds / spread`` (``low``).
    ``idle_rate``: the positions per CPU-second of the games timed now, one idle core's
    (``tuner.games.throughput``), where our engine's games were timed."""

    seconds: float
    source: str
    spread: float = 1.0
    idle_rate: float | None = None

    @property
    def low(self) -> float:
        return self.seconds / self.spread


@dataclass(frozen=True)
class Price:
    """What a run of ``games`` costs at ``game_time``."""

    games: GameCount
    game_time: GameTime
    played: int = 0  # training games played already: ``games`` is what is left
    start: float = START_SECONDS  # seconds before the first game: Ray's, or this process's

    @property
    def cpu_seconds(self) -> float:
        return self.games.total * self.game_time.seconds

    @property
    def training_share(self) -> float:
        return self.games.training / self.games.total

    def wall_seconds(self, cpus: int) -> float:
        """On ``cpus`` idle CPUs: a generation's games keep at most as many busy as it has
        games, the final validation's at most as many as it has."""
        g, seconds = self.games, self.game_time.seconds
        return (self.start + g.training * seconds / min(cpus, max(g.per_generation, 1))
                + g.validation * seconds / min(cpus, max(g.validation_round, 1)))

    def at_low(self) -> Price:
        """The price at the low end of its game time's range."""
        low = dataclasses.replace(self.game_time, seconds=self.game_time.low, spread=1.0)
        return dataclasses.replace(self, game_time=low)


def most_games(config: RunConfig, cpus: int) -> GameCount:
    """The most games ``config`` can play, its ``cmaes.popsize: auto`` resolved for ``cpus``."""
    base = popsize_for(config, cpus) if config.cmaes.popsize == AUTO else config.popsize
    if config.cmaes.popsize == AUTO:
        base *= config.strategy.kind.scale(config.strategy.settings)
    candidates = base * 2**config.cmaes.restarts  # each restart doubles the population
    most = config.most_games
    per_generation = candidates * most
    limits = []
    if config.cmaes.max_generations is not None:
        limits.append(config.cmaes.max_generations * per_generation)
    if config.cmaes.max_games is not None:  # checked after each generation
        limits.append(config.cmaes.max_games - 1 + per_generation)
    training = min(limits)
    generations = config.cmaes.max_generations
    if config.cmaes.max_games is not None:  # as many as the fewest games a generation plays
        fewest = base * config.evaluation.games.first
        by_games = math.ceil(config.cmaes.max_games / fewest)
        generations = min(generations or by_games, by_games)
    validation = config.validation
    every = generations // validation.every if validation.every else 0
    final = validation.top_k + 1 + validation.marks  # and the mean, the start, a baseline
    return GameCount(generations, candidates, most, per_generation, training,
                     (final + every) * validation.games, config.cmaes.restarts,
                     final * validation.games)


def price(config: RunConfig, cpus: int, game_time: GameTime, played: int = 0,
          here: bool = False) -> Price:
    """What a run of ``config`` on ``cpus`` CPUs costs at ``game_time``, once it has played
    ``played`` training games (a resumed run: what is left), its games starting after Ray's
    start, or after ``HERE_START_SECONDS`` where they play in this process (``here``)."""
    games = most_games(config, cpus)
    left = dataclasses.replace(games, training=max(0, games.training - played))
    return Price(left, game_time, played, HERE_START_SECONDS if here else START_SECONDS)


def rough_game_time(config: RunConfig) -> GameTime | None:
    """The rough figure for our engine at the config's depth; None for an external engine,
    whose games only it can time."""
    if config.engine is not None:
        return None
    seconds = UnitSize.rough_seconds(config.search.depth)
    return GameTime(seconds, f"a rough figure for depth {config.search.depth}, "
                             f"{seconds_text(seconds)} a game")


def rough_cpu_seconds_left(config: RunConfig, played: int = 0) -> float | None:
    """Roughly the CPU time of the games a run of ``config`` has left once it has played
    ``played`` training games, at the rough game time of its depth: enough to tell a run Ray
    cannot shorten (``tuner.cluster.ray_evaluator.plays_here``). None where it cannot be told
    before the run: an external engine's games, and ``popsize: auto``, whose population
    follows the CPUs a run is given."""
    game_time = rough_game_time(config)
    if game_time is None or config.cmaes.popsize == AUTO:
        return None
    return price(config, 1, game_time, played).cpu_seconds


def positions_over_start(depth: DepthPolicy) -> float:
    """The positions a game of a run searches against one at its start, at the depth."""
    return _at_depth(POSITIONS_RUN_OVER_START, POSITIONS_RUN_OVER_START_DEEPER, depth)


def busy_over_idle(depth: DepthPolicy) -> float:
    """A position's CPU time on a machine whose every core plays, against an idle core's, at the
    depth."""
    return _at_depth(BUSY_OVER_IDLE, BUSY_OVER_IDLE_DEEPER, depth)


def _at_depth(factors: dict[int, float], deeper: float, depth: DepthPolicy) -> float:
    """A factor measured by fixed depth, for ``depth``: a policy as the fixed depth it costs about
    as much as, depth 0 as depth 1, any depth the table lacks as ``deeper``."""
    return factors.get(max(1, rough_depth(depth)), deeper)


def run_over_start(depth: DepthPolicy) -> float:
    """What a game of a run costs on busy cores against one at its start on an idle core, at
    the depth: its positions' factor times the busy cores'."""
    return positions_over_start(depth) * busy_over_idle(depth)


def recorded_game_time(run_dir: Path, config: RunConfig) -> GameTime | None:
    """The seconds a training game took in the run in ``run_dir`` (``cluster.csv`` over
    ``history.csv``'s games), if it is a run of this config's family, parameters and search;
    None otherwise."""
    try:
        stored = ckpt.read_stored_config(run_dir)
        cluster = read_rows(run_dir / ckpt.CLUSTER_FILE, ("game_seconds",), required=True)
        history = read_rows(run_dir / ckpt.HISTORY_FILE, ("games",), required=True)
    except (ValueError, OSError):  # CheckpointError is a ValueError
        return None
    mine = config.resolved()
    if any(stored.get(key) != mine.get(key) for key in ("family", "engine", "params", "search")):
        return None
    return recorded(cluster, int(history[-1]["games"]), f"recorded by {run_dir}")


def recorded(cluster: Iterable[dict], games: int, where: str) -> GameTime | None:
    """The game time of a run's ``games`` training games, from its generations' game seconds
    (``cluster.csv``'s rows); None before it has played any."""
    seconds = sum(row["game_seconds"] for row in cluster)
    if games <= 0 or seconds <= 0:
        return None
    return GameTime(seconds / games, f"{where}: {seconds_text(seconds / games)} a game over "
                                     f"{counted(games, 'training game')}")


def default_cpus(workers: int | None) -> int:
    """The CPUs a run on this machine uses: ``--workers``, or all cores (as Ray starts)."""
    return workers or os.cpu_count() or 1


def summary(result: Price, cpus: int, config: RunConfig, label: str = "price") -> str:
    """The price in one line, as a run's first lines show it: the figures of ``report``."""
    games = result.games
    return (f"{label}: at most {counted(games.total, 'game')} ({result.training_share:.0%} "
            f"training), {cpu_hours(result)} CPU-hours: {walls(result, cpus, config)}"
            f"; game time {result.game_time.source}")


def walls(result: Price, cpus: int, config: RunConfig) -> str:
    """The wall time on ``cpus`` idle CPUs and on each of ``CLUSTER_SIZES`` (a range where the
    game time is one), and why where the most CPUs barely shorten it; under ``popsize: auto``
    each size plays its own population."""
    sizes = [cpus, *(n for n in CLUSTER_SIZES if n != cpus)]
    parts = []
    for n in sizes:
        at = result if n == cpus else price(config, n, result.game_time, result.played)
        parts.append(_range(duration(at.at_low().wall_seconds(n)), duration(at.wall_seconds(n)))
                     + " on " + (counted(n, "idle CPU") if n == cpus else f"{n:,}"))
    most = max(sizes)
    why = no_sooner(price(config, most, result.game_time, result.played), most)
    return ", ".join(parts) + (f" ({why})" if why else "")


def no_sooner(result: Price, cpus: int) -> str | None:
    """Why ``cpus`` CPUs barely shorten ``result`` (its wall time is at least twice its CPU
    time over them): the start, or a generation with fewer games than CPUs; None where they
    do."""
    ideal = result.cpu_seconds / cpus
    unfilled = result.wall_seconds(cpus) - result.start - ideal  # CPUs the games leave idle
    if result.start + unfilled < ideal:
        return None
    if result.start >= unfilled:
        return f"on {cpus:,} CPUs most of it is Ray's start, about {duration(result.start)}"
    per_generation = result.games.per_generation
    return (f"on {cpus:,} CPUs a generation's {counted(per_generation, 'game')} keep only "
            f"{per_generation:,} busy")


def cpu_hours(result: Price) -> str:
    """The CPU-hours, a range where the game time is one."""
    return _range(hours(result.at_low().cpu_seconds), hours(result.cpu_seconds))


def _range(low: str, high: str) -> str:
    return high if low == high else f"{low} to {high}"


def report(result: Price, cpus: int, config: RunConfig, where: str) -> list[str]:
    """The price as ``tune run --dry-run`` prints it."""
    g, game = result.games, result.game_time
    training = (f"{counted(g.generations, 'generation')} x {g.candidates:,} candidates x up "
                f"to {counted(g.per_candidate, 'game')}")
    if g.restarts:
        training += f" (the largest population, after {counted(g.restarts, 'restart')})"
    if g.training < g.generations * g.per_generation:
        training += f", up to max_games ({config.cmaes.max_games:,}) and one generation more"
    every = config.validation.every
    marks = ["the start"] if config.validation.validates_start else []
    if config.validation.reference not in (None, START):
        marks.append(config.validation.reference)  # a baseline's name
    validation = (f"top {config.validation.top_k} + the mean"
                  + "".join(f" + {mark}" for mark in marks)
                  + (f", and the best guess every {counted(every, 'generation')}" if every else "")
                  + f", {counted(config.validation.games, 'game')} each")
    share = result.training_share
    dominates = f"training {share:.0%}" if share >= 0.5 else f"validation {1 - share:.0%}"
    seconds = _range(seconds_text(game.low), seconds_text(game.seconds))
    return [
        f"price of run {config.run.name}, at most:",
        f"  training games    {g.training:>12,}  ({training})",
        f"  validation games  {g.validation:>12,}  ({validation})",
        f"  game time         {seconds:>12}  ({game.source})",
        f"  CPU-hours         {cpu_hours(result):>12}  ({dominates})",
        f"  wall time         {walls(result, cpus, config)}{where}",
    ]


def hours(seconds: float) -> str:
    """CPU-hours with the digits that matter: 0.012, 1.3, 15, 120."""
    value = seconds / 3600
    return f"{value:,.0f}" if value >= 100 else f"{value:.2g}" if value < 10 else f"{value:.1f}"


def positions_text(positions: float) -> str:
    """Positions searched, rounded as people read them: 950, 362k, 11M, 1.8G."""
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if positions >= scale:
            value = positions / scale
            return f"{value:.2g}{suffix}" if value < 10 else f"{value:.0f}{suffix}"
    return f"{positions:.0f}"


def seconds_text(seconds: float) -> str:
    """A game's time: 2.3 ms, 0.98 s, 25 s."""
    return f"{seconds * 1000:.2g} ms" if seconds < 0.1 else f"{seconds:.2g} s"


def duration(seconds: float) -> str:
    """A wall time as people read it: 40 s, 12 min, 7 h 40 min, 3.5 days."""
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 72 * 3600:
        minutes = round(seconds / 60)
        return f"{minutes // 60} h {minutes % 60} min"
    return f"{seconds / 86400:.1f} days"
