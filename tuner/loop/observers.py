"""What watches a run: observers of the games being played and of each generation's record.

The loop calls every observer's hooks in order and never writes a file or a line itself: the
best weights so far, the checkpoint (with ``history.csv`` and ``cluster.csv``), the generation's
log line and the progress bars are observers here, and a benchmark, a test or a live status
subscribes the same way (``TuningRun.run(evaluator, observers=...)``). A hook that writes runs
while interrupts are deferred, so a generation's files are all written or none.
"""

from __future__ import annotations

import contextlib
import logging
import math
from collections.abc import Callable, Iterator, Sequence
from typing import IO

from engine.depth import to_yaml
from engine.stats import Z95, clock, counted, interval, plus_minus, readable
from engine.weights_file import WeightsFile
from tuner.config import START, RunConfig
from tuner.games.fitness import Gain
from tuner.games.progress import GameBar
from tuner.loop.record import GenerationRecord, ValidationRow
from tuner.space import SearchSpace
from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import RunState
from tuner.store.store import RunStore

log = logging.getLogger("tuner.loop.run")  # the run's own logger: run.log and the terminal


class Observer:
    """The hooks of a run, each doing nothing unless a subclass overrides it."""

    def games_started(self, label: str, total: int, up_to: bool) -> None:
        """A phase of ``total`` games named ``label`` (``up_to``: a race, which may play
        fewer)."""

    def games_played(self, count: int) -> None:
        """``count`` more games of the current phase have finished."""

    def games_found(self, count: int) -> None:
        """``count`` games of the current phase were found kept from an earlier sitting
        (``tuner.games.kept``): finished, though not played now. Unless overridden, they count
        as played."""
        self.games_played(count)

    def games_renamed(self, label: str) -> None:
        """The current phase goes on under a new name (a race's next round)."""

    def games_ended(self) -> None:
        """The current phase is over."""

    def generation_ended(self, record: GenerationRecord, state: RunState) -> None:
        """A generation is done and ``state`` holds it."""

    def validation_ended(self, rows: list[ValidationRow], winner: ValidationRow,
                         state: RunState) -> None:
        """The final validation is done: every candidate's row, and the winner."""


class Observers(Observer):
    """Several observers as one, called in order."""

    def __init__(self, observers: Sequence[Observer] = ()):
        self.observers = list(observers)

    @contextlib.contextmanager
    def games(self, label: str, total: int, up_to: bool = False) -> Iterator[None]:
        """A phase of games, ended however the block ends."""
        self.games_started(label, total, up_to)
        try:
            yield
        finally:
            self.games_ended()

    def games_started(self, label: str, total: int, up_to: bool) -> None:
        for observer in self.observers:
            observer.games_started(label, total, up_to)

    def games_played(self, count: int) -> None:
        for observer in self.observers:
            observer.games_played(count)

    def games_found(self, count: int) -> None:
        for observer in self.observers:
            observer.games_found(count)

    def games_renamed(self, label: str) -> None:
        for observer in self.observers:
            observer.games_renamed(label)

    def games_ended(self) -> None:
        for observer in self.observers:
            observer.games_ended()

    def generation_ended(self, record: GenerationRecord, state: RunState) -> None:
        for observer in self.observers:
            observer.generation_ended(record, state)

    def validation_ended(self, rows: list[ValidationRow], winner: ValidationRow,
                         state: RunState) -> None:
        for observer in self.observers:
            observer.validation_ended(rows, winner, state)


class ProgressBars(Observer):
    """A bar per phase of games on ``file`` (None: stderr) where it is a terminal, and plain
    lines of the count at most a minute apart where it is not (``tuner.games.progress``); none
    when not ``enabled``. ``clock``: a test's own, for the lines (``GameBar``)."""

    def __init__(self, enabled: bool = True, file: IO[str] | None = None,
                 clock: Callable[[], float] | None = None):
        self.enabled = enabled
        self.file = file
        self.clock = clock
        self.bar: GameBar | None = None

    def games_started(self, label: str, total: int, up_to: bool) -> None:
        self.games_ended()  # one left open: its lines would go on beside the new phase's
        self.bar = GameBar(label, total, up_to=up_to, enabled=self.enabled, file=self.file,
                           clock=self.clock)

    def games_played(self, count: int) -> None:
        if self.bar is not None:
            self.bar.update(count)

    def games_found(self, count: int) -> None:
        if self.bar is not None:
            self.bar.found(count)

    def games_renamed(self, label: str) -> None:
        if self.bar is not None:
            self.bar.set_description_str(label)

    def games_ended(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class BestSoFar(Observer):
    """``best.yaml``: the best training fitness so far after each generation, the validation
    winner at the end."""

    def __init__(self, config: RunConfig, store: RunStore):
        self.config = config
        self.store = store

    def generation_ended(self, record: GenerationRecord, state: RunState) -> None:
        top = state.elites[0]
        self.write(top.weights, {
            "status": "in progress: best training fitness so far (not yet validated)",
            "run": self.config.run.name,
            "generation": top.generation,
            "fitness": self.config.evaluation.fitness,
            "training_fitness": top.fitness,
            "training_stderr": top.stderr,
            "training_games": top.games,
        })

    def validation_ended(self, rows: list[ValidationRow], winner: ValidationRow,
                         state: RunState) -> None:
        c = self.config
        self.write(winner.weights, {
            "status": "validated",
            "run": c.run.name,
            "candidate": winner.label,
            "generation": winner.generation,
            "fitness": c.evaluation.fitness,
            "validation_fitness": winner.fitness.value,
            "validation_stderr": winner.fitness.stderr,
            "validation_mean_score": winner.mean_score,
            "validation_ci95": [winner.mean_score - winner.ci95, winner.mean_score + winner.ci95],
            "validation_games": c.validation.games,
            "depth": to_yaml(c.search.depth),
            "cutoff": c.search.cutoff,
            "generations": state.generation,
            "training_games": state.games,
            "config": state.config,
        })

    def write(self, weights: dict[str, float], provenance: dict) -> None:
        engine = self.config.engine
        self.store.write_best(WeightsFile(self.config.family, weights, self.config.search.depth,
                                          provenance, engine and engine.declared.name))


class Checkpoints(Observer):
    """The checkpoint after each generation (``history.csv`` and ``cluster.csv`` beside it), and
    the finished state with the validation table at the end."""

    def __init__(self, store: RunStore):
        self.store = store

    def generation_ended(self, record: GenerationRecord, state: RunState) -> None:
        self.store.save_state(state)

    def validation_ended(self, rows: list[ValidationRow], winner: ValidationRow,
                         state: RunState) -> None:
        self.store.write_validation(validation_csv(rows))
        self.store.save_state(state)


class GenerationLog(Observer):
    """One line per generation, and the validation table at the end; each +/- is a 95%
    confidence interval, as everywhere a person reads one (``history.csv`` keeps the standard
    error). A generation's line gives the CPUs and the share of their time spent on training
    games (``cluster.csv``)."""

    def __init__(self, config: RunConfig, space: SearchSpace):
        self.config = config
        self.space = space

    def generation_ended(self, record: GenerationRecord, state: RunState) -> None:
        for line in candidate_lines(record):
            log.debug("%s", line)
        c, row, machines = self.config, record.row, record.machines
        rate = games_rate(record)
        remaining = eta_seconds(c, state, record)
        eta = clock(remaining) if remaining is not None else "?"
        noise = "  (differences within noise)" if row["within_noise"] else ""
        spent = ""
        if record.racing:
            spent = (f"  games {row['games_min']:,}-{row['games_max']:,} per candidate (mean "
                     f"{row['games_mean']:,.0f}, {row['games_saved']:,} saved)")
        validated = ""
        if "validated" in row:
            validated = (f"  validated {readable(row['validated'])} "
                         f"{plus_minus(Z95 * row['validated_stderr'], c.validation.games)}")
        log.info(
            "%s  evals %s  best %s %s  median %s  worst %s  sigma %s%s%s  "
            "%s games/s  %s, %.0f%% on games  elapsed %s  ETA %s%s",
            generation_label(self.config, row["generation"]), f"{row['evaluations']:,}",
            readable(row["best"]), interval(Z95 * row["best_stderr"]), readable(row["median"]),
            readable(row["worst"]), readable(row["sigma"], 3), spent, validated,
            readable(rate, 3), counted(machines["cpus"], "CPU"), 100 * machines["share"],
            clock(state.seconds), eta, noise,
        )

    def validation_ended(self, rows: list[ValidationRow], winner: ValidationRow,
                         state: RunState) -> None:
        c = self.config
        log.info("validation on %s each%s", counted(c.validation.games, "held-out game"),
                 " (+/-: 95% confidence interval)" if c.validation.games > 1 else "")
        for r in rows:
            score = ("" if c.evaluation.fitness == "mean_score" else
                     f"  mean score {readable(r.mean_score)} {plus_minus(r.ci95, r.fitness.games)}")
            log.info("validation  %-18s gen %3d  %s %s %s%s%s", r.label, r.generation,
                     c.evaluation.fitness.replace("_", " "), readable(r.fitness.value),
                     plus_minus(Z95 * r.fitness.stderr, r.fitness.games), score,
                     "  <- winner" if r is winner else "")
        if winner.vs_start is not None:
            gain = winner.vs_start
            log.info("validation  %s", Gain(START, gain.value, gain.stderr, gain.games,
                                            paired=True).words())
        for line in self.space.edge_warnings(winner.weights):
            log.warning("warning: %s", line)


def games_rate(record: GenerationRecord) -> float:
    """A generation's training games per second of its wall time (those it played: not the
    games kept from an earlier sitting)."""
    played = record.spent.games - record.spent.kept
    return played / record.seconds if record.seconds > 0 else math.inf


def eta_seconds(config: RunConfig, state: RunState, record: GenerationRecord) -> float | None:
    """The seconds left until the nearer stop condition, at the pace so far (the generations'
    mean time, the last generation's games per second); None with no limit set."""
    per_generation = state.seconds / state.generation
    remaining = []
    if config.cmaes.max_generations is not None:
        remaining.append((config.cmaes.max_generations - state.generation) * per_generation)
    if config.cmaes.max_games is not None:
        remaining.append(max(config.cmaes.max_games - state.games, 0)
                         / max(games_rate(record), 1e-9))
    return min(remaining) if remaining else None


def candidate_lines(record: GenerationRecord) -> list[str]:
    """One debug line per candidate: its fitness, games and weights."""
    return [f"gen {record.generation} candidate {i}: fitness {readable(f.value)} "
            f"{interval(Z95 * f.stderr, f.games)} over {counted(f.games, 'game')}, weights {w}"
            for i, (w, f) in enumerate(zip(record.weights, record.fits))]


def generation_label(config: RunConfig, generation: int) -> str:
    """A generation as the log and the progress bars name it: ``gen 3 of 20``."""
    limit = config.cmaes.max_generations
    return f"gen {generation:,}" + (f" of {limit:,}" if limit is not None else "")


def validation_csv(rows: list[ValidationRow]) -> str:
    """``validation.csv``: a row per validated candidate, its fitness less the start's (paired,
    with its standard error) where the start was validated, its reach and weights beside it."""
    table = [
        {
            "candidate": r.label,
            "generation": r.generation,
            "fitness": r.fitness.value,
            "fitness_stderr": r.fitness.stderr,
            "mean_score": r.mean_score,
            "ci95": r.ci95,
            **({"vs_start": r.vs_start.value, "vs_start_stderr": r.vs_start.stderr}
               if r.vs_start is not None else {}),
            **{f"reach_{t}": share for t, share in r.reach.items()},
            **{f"w_{k}": v for k, v in r.weights.items()},
        }
        for r in rows
    ]
    return ckpt.rows_csv(table)
