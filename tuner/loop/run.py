"""A run's lifecycle: start it fresh or resume it from its checkpoint, drive generation steps
until a stop condition or ``tune stop``, then validate.

What a generation does is ``tuner.loop.step``; validation is ``tuner.loop.validation``; every
file and line a run writes comes from its observers (``tuner.loop.observers``) through its store
(``tuner.store.store``). ``TuningRun.run`` takes extra observers, and ``step`` runs a single
generation: the public seams that benchmarks and tests drive a run through.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from engine.external.player import engine_digest
from engine.families.registry import family_source_digest
from engine.stats import counted
from tuner import commands, interrupts
from tuner.config import AUTO, MAX_GAMES_AT_ONCE, MAX_POPSIZE, RunConfig
from tuner.errors import CheckpointError
from tuner.games.evaluation import Evaluator
from tuner.games.kept import KeptGames
from tuner.games.policy import auto_popsize
from tuner.loop.observers import (
    BestSoFar,
    Checkpoints,
    GenerationLog,
    Observer,
    Observers,
    ProgressBars,
)
from tuner.loop.record import GenerationRecord
from tuner.loop.step import CMA_STOP_PREFIX, Games, GenerationStep
from tuner.loop.validation import validate
from tuner.space import SearchSpace
from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import RunState
from tuner.store.store import DirectoryStore, RunStore
from tuner.strategies import Strategy, StrategyStateError, restore_strategy, strategy_for
from tuner.strategies.base import default_popsize

log = logging.getLogger(__name__)

__all__ = ["CMA_STOP_PREFIX", "TuningRun", "popsize_for"]


def popsize_for(config: RunConfig, cpus: int) -> int:
    """``cmaes.popsize`` as ``auto`` resolves it for ``cpus`` CPUs (``tuner.games.policy.
    auto_popsize``), in multiples of the strategy's own (a population strategy's ``factor``)."""
    scale = config.strategy.kind.scale(config.strategy.settings)  # candidates per cmaes.popsize
    smallest = default_popsize(len(config.tuned))
    largest = max(smallest, min(MAX_POPSIZE, MAX_GAMES_AT_ONCE // (
        config.most_games * 2**config.cmaes.restarts)) // scale)
    candidates = auto_popsize(cpus, config.search.depth, config.most_games, smallest * scale,
                              largest * scale)
    return math.ceil(candidates / scale)


def new_strategy(config: RunConfig, space: SearchSpace) -> Strategy:
    """The strategy ``config`` names, at its initial point."""
    return strategy_for(config.strategy.name, config.strategy.settings, config.shared, space)


def player_digest(config: RunConfig) -> str | None:
    """A digest of the code that plays the run's games: its family's source, or its engine's
    command and the files it names (``engine.external.player.engine_digest``)."""
    if config.engine is not None:
        return engine_digest(config.engine.engine)
    return family_source_digest(config.family)


def _store(place: Path | RunStore, staged: Callable[[], Path] | None = None) -> RunStore:
    return DirectoryStore(place, staged) if isinstance(place, Path) else place


class TuningRun:
    """A run in a store (a run directory, or its twin in memory): create it fresh with
    ``start`` or continue it with ``resume``, then ``run`` it."""

    def __init__(self, config: RunConfig, store: RunStore, state: RunState,
                 strategy: Strategy | None, progress: bool = True):
        self.config = config
        self.store = store
        self.state = state
        self.strategy = strategy
        self.space = SearchSpace(config.params)
        self.progress = progress
        self.progress_file: IO[str] | None = None  # where the progress bars go; None: stderr
        self.evaluator: Evaluator | None = None
        self.observers = Observers()
        self._step: GenerationStep | None = None
        self.kept: KeptGames | None = None
        self.stopped_on_request = False

    @property
    def run_dir(self) -> Path:
        return self.store.location

    @property
    def checkpointed(self) -> bool:
        return self.store.checkpointed

    @classmethod
    def start(cls, config: RunConfig, run_dir: Path | RunStore, progress: bool = True,
              strategy: Strategy | None = None, place: Callable[[], Path] | None = None,
              resolved: dict | None = None) -> TuningRun:
        """A fresh run in ``run_dir`` (a directory, or a store), with the strategy the config
        asks for unless one is given. ``place``: called once the first checkpoint is written, it
        moves the run to its final directory and returns it (``tuner.store.run_dir.NewRun``).
        ``resolved``: ``config.resolved()``, where the caller has it already."""
        store = _store(run_dir, place)
        if strategy is None and config.cmaes.popsize != AUTO:
            strategy = new_strategy(config, SearchSpace(config.params))
        state = RunState(config=resolved or config.resolved(),
                         strategy=strategy.dumps() if strategy else b"",
                         family_digest=player_digest(config))
        store.prepare()
        store.write_config(state.config)
        return cls(config, store, state, strategy, progress)

    @classmethod
    def resume(cls, config: RunConfig, run_dir: Path | RunStore, state: RunState,
               progress: bool = True, family_changed: bool = False,
               resume: Mapping | None = None) -> TuningRun:
        """The run in ``run_dir`` from its checkpoint ``state``. A family file or module, or an
        engine's program, edited since the run started is refused (the run would mix two
        heuristics) unless ``family_changed``; then the run goes on with the new code and records
        it. ``resume``: the job's options that a resume takes, for the command the refusal
        prints (``tuner.commands.resume``)."""
        store = _store(run_dir)
        digest = player_digest(config)
        if state.family_digest is not None and digest != state.family_digest:
            what = config.player_name
            if not family_changed:
                anyway = {**(resume or {}), "family_changed": True}
                raise CheckpointError(
                    f"{store.location}: the code of {what} changed since the run started, so its "
                    "games would mix two heuristics: put the old code back, or resume with the "
                    "new code anyway: "
                    f"{commands.resume(store.location, **anyway)}")
            log.warning("warning: %s changed since the run started; resuming with the new code "
                        "(--family-changed)", what)
            state.family_digest = digest
        for path in store.prepare():
            log.info("removed %s, left by an interrupted write", path)
        resolved = config.resolved()
        if state.config != resolved:  # an allowed change to a stop condition or to Ray
            state.config = resolved
            store.write_config(state.config)
        try:
            strategy = restore_strategy(state.strategy, config.strategy.name)
        except StrategyStateError as err:
            raise CheckpointError(f"{store.location / ckpt.CHECKPOINT_FILE}: {err}") from None
        return cls(config, store, state, strategy, progress)

    # ----------------------------------------------------------------------------------------
    def run(self, evaluator: Evaluator, observers: Sequence[Observer] = ()) -> RunState:
        """Run generations until a stop condition, then validate. Returns the final state.
        ``observers`` watch it beside the run's own (files, log lines, progress bars)."""
        self.evaluator = evaluator
        self.observers = Observers([*self.own_observers(), *observers])
        self._step = None  # a step built before (by ``step``) would report to the old observers
        if self.strategy is None:
            self.resolve_popsize(evaluator.workers)
        if self.state.generation:  # only a resumed run starts past generation 0
            log.info("%s", self.resume_line())
        self.state.finished = False
        # A request made before the first generation (while Ray starts, say) is honoured after
        # it: a run stopped sooner would have no checkpoint to resume from. One left by an
        # earlier job was removed when the store took the directory (``RunStore``).
        while (reason := self.stop_reason()) is None:
            interrupts.check()
            self.step()
            if self.store.take_stop_request():
                self.stopped_on_request = True
                self.state.stop_reason = "stopped on request (tune stop)"
                return self.state
        self.state.stop_reason = reason
        log.info("stopping: %s", reason)
        interrupts.check()
        rows, winner = validate(self.games(), self.space, self.state,
                                self.strategy.result.mean)
        with interrupts.deferred():
            self.state.finished = True
            self.observers.validation_ended(rows, winner, self.state)
        self.store.take_stop_request()  # asked while it validated: it has finished
        return self.state

    def own_observers(self) -> list[Observer]:
        """What every run writes and shows: progress bars, best weights so far, checkpoints,
        a log line per generation."""
        return [ProgressBars(self.progress, self.progress_file),
                BestSoFar(self.config, self.store), Checkpoints(self.store),
                GenerationLog(self.config, self.space)]

    def games(self) -> Games:
        if self.kept is None:  # read once: the store's games of an earlier sitting
            self.kept = KeptGames(self.store)
        return Games(self.config, self.evaluator, self.observers, self.kept)

    def step(self, evaluator: Evaluator | None = None) -> GenerationRecord:
        """One generation, checkpointed when it completes: the seam a benchmark or a test drives
        a run through, generation by generation, on ``evaluator`` (the last one given, or the
        one ``run`` was given)."""
        if evaluator is not None:
            self.evaluator = evaluator
        if self.strategy is None:
            self.resolve_popsize(self.evaluator.workers)
        if not self.observers.observers:
            self.observers = Observers(self.own_observers())
        if self._step is None or self._step.games.evaluator is not self.evaluator:
            self._step = GenerationStep(self.config, self.space, self.strategy, self.games())
        return self._step(self.state)

    def resolve_popsize(self, cpus: int) -> None:
        """``cmaes.popsize: auto``: the population for ``cpus`` CPUs (``tuner.games.policy.
        auto_popsize``), chosen once, before the first generation, and written into the run's
        config, so that the run, resumed on any cluster, goes on with it."""
        popsize = popsize_for(self.config, cpus)
        self.config = self.config.with_popsize(popsize, cpus)
        self.state.config = self.config.resolved()
        self.store.write_config(self.state.config)
        self.strategy = new_strategy(self.config, self.space)
        self.state.strategy = self.strategy.dumps()
        log.info("cmaes.popsize auto: %s for %s (written into the run's %s)",
                 counted(popsize, "candidate"), counted(cpus, "CPU"), ckpt.CONFIG_FILE)

    def resume_line(self) -> str:
        """Where a resumed run stands: its name, generation and the games it has played."""
        s, limit = self.state, self.config.cmaes.max_generations
        of = f"of {limit:,}" if limit is not None else "(no generation limit)"
        return (f"resumed run {self.config.run.name} at generation {s.generation:,} {of}, "
                f"{counted(s.games, 'game')} so far")

    def stop_reason(self) -> str | None:
        c, s = self.config, self.state
        if c.cmaes.max_generations is not None and s.generation >= c.cmaes.max_generations:
            return f"reached max_generations ({c.cmaes.max_generations})"
        if c.cmaes.max_games is not None and s.games >= c.cmaes.max_games:
            return f"reached max_games ({c.cmaes.max_games})"
        return s.cma_stop or None
