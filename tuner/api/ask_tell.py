"""Ask and tell: a run whose games the caller plays. ``ask`` gives a generation's candidates (named
weights) and the seeds ``tune run`` would play them on; ``tell`` takes their fitness, and the
generation is checkpointed as ``tune run`` checkpoints one: the same strategy, the same state, the
same files (``config.yaml``, ``checkpoint.pkl``, ``history.csv``, ``best.yaml`` so far).

A run stopped between an ask and its tell resumes to the same candidates: the checkpoint holds
the strategy as the last tell left it. Validation is the caller's too; ``tune resume RUN_DIR``
validates such a run (or goes on with ``tune``'s own games) once it is handed over.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Self

from tuner import interrupts
from tuner.api.job import same_run
from tuner.api.resumed import checkpointed, locked
from tuner.config import load_config
from tuner.games.fitness import Fitness

if TYPE_CHECKING:
    from tuner.loop.run import TuningRun
    from tuner.store.checkpoint import RunState
    from tuner.store.store import DirectoryStore


@dataclass(frozen=True)
class Candidates:
    """A generation asked for: its number, each candidate's weights by parameter name (every
    parameter of the family, fixed ones included), and the seeds a ``tune`` run would play
    each candidate on (the most games it can play: ``evaluation.games``)."""

    generation: int
    weights: list[dict[str, float]]
    seeds: list[int]


class AskTell:
    """A run in a run directory, driven by ``ask`` and ``tell``: start it fresh with ``start``
    or go on with ``resume``, and ``close`` it (or use it as a context manager) to let go of the
    directory. A run closed before its first tell leaves nothing behind."""

    def __init__(self, run: TuningRun, store: DirectoryStore):
        from tuner.loop.observers import BestSoFar, Checkpoints, Observers  # with the run

        self._run = run
        self._store = store
        self._observers = Observers([BestSoFar(run.config, store), Checkpoints(store)])
        self._asked: Candidates | None = None
        self._points: list = []
        self._asked_at = 0.0
        self._broken = False  # a tell that raised: the state in memory may be half told

    @classmethod
    def start(cls, config: str | os.PathLike, *, overwrite: bool = False,
              cpus: int | None = None) -> AskTell:
        """A fresh run of the config file ``config`` in its run directory, as ``tune run``
        starts one (``overwrite``: replace the run there once this one has a checkpoint).
        ``cpus``: what ``cmaes.popsize: auto`` is resolved for (default: this machine's
        cores)."""
        from tuner.loop.run import TuningRun  # the engine and pycma, once the config is known good
        from tuner.store.store import DirectoryStore

        loaded = load_config(config)
        resolved = loaded.resolved()
        store = DirectoryStore.new(loaded.run_dir, overwrite, same_run(loaded, resolved))
        try:
            run = TuningRun.start(loaded, store, progress=False, resolved=resolved)
            if run.strategy is None:  # cmaes.popsize: auto
                run.resolve_popsize(cpus or os.cpu_count() or 1)
        except BaseException:
            store.close()
            raise
        return cls(run, store)

    @classmethod
    def resume(cls, run_dir: str | os.PathLike, *, family_changed: bool = False) -> AskTell:
        """The run in ``run_dir`` from its last checkpoint (``family_changed``: as ``tune resume
        --family-changed``)."""
        from tuner.loop.run import TuningRun  # the engine and pycma, once the run is found

        store = locked(run_dir)
        try:
            _stored, state, config = checkpointed(store.directory)
            run = TuningRun.resume(config, store, state, progress=False,
                                   family_changed=family_changed)
        except BaseException:
            store.close()
            raise
        return cls(run, store)

    @property
    def run_dir(self) -> Path:
        return self._store.location

    @property
    def state(self) -> RunState:
        """The run's state as of its last tell (what its checkpoint holds)."""
        return self._run.state

    def stop_reason(self) -> str | None:
        """Why the run should stop (a generation or games limit of its config, or pycma's own
        criteria), or None while it goes on."""
        return self._run.stop_reason()

    def ask(self) -> Candidates:
        """The next generation's candidates; asked again before a tell, the same ones."""
        self._check()
        if self._asked is None:
            run = self._run
            from tuner.games.seeds import training_seeds  # numpy code, loaded with the run

            self._points = run.strategy.ask()
            generation = run.state.generation + 1
            self._asked = Candidates(generation, [run.space.weights(x) for x in self._points],
                                     training_seeds(run.config.run.seed, generation,
                                                    run.config.evaluation.games.most))
            self._asked_at = time.perf_counter()
        return self._asked

    def tell(self, fitness: Sequence[float | Fitness]) -> None:
        """The fitness of each candidate ``ask`` gave, in its order (higher is better): a number,
        or a ``Fitness`` with its standard error and the games it came from (a number counts as
        every seed played, its standard error unknown). The generation is checkpointed. If
        this raises past its checks (Ctrl-C, a full disk), close the loop and resume it: the
        run goes on from its last checkpoint."""
        self._check()
        asked = self._asked
        if asked is None:
            raise ValueError("tell: no candidates were asked: call ask() first")
        if len(fitness) != len(asked.weights):
            raise ValueError(f"tell: {len(asked.weights)} candidates were asked, got "
                             f"{len(fitness)} fitness values")
        fits = [f if isinstance(f, Fitness) else Fitness(float(f), math.nan, len(asked.seeds))
                for f in fitness]
        bad = [i for i, f in enumerate(fits) if not math.isfinite(f.value) or f.games < 1]
        if bad:
            raise ValueError(f"tell: candidate {bad[0]}: expected a finite fitness from at least "
                             f"one game, got {fits[bad[0]]}")
        try:
            self._told(asked, fits)
        except BaseException:
            self._broken = True
            raise
        self._asked = None

    def _check(self) -> None:
        if self._broken:
            raise ValueError(f"{self.run_dir}: a tell failed part of the way: close this loop "
                             "and resume the run from its last checkpoint (AskTell.resume)")

    def _told(self, asked: Candidates, fits: list[Fitness]) -> None:
        """The state a generation step of ``tune run`` leaves, from the caller's fitness, and
        its checkpoint, all or none (interrupts wait)."""
        from tuner.loop.record import GenerationRecord, Spent  # with the run
        from tuner.loop.step import CMA_STOP_PREFIX, GenerationStep

        run, state = self._run, self._run.state
        step = GenerationStep(run.config, run.space, run.strategy, games=None)
        run.strategy.tell(self._points, [f.value for f in fits])
        result = run.strategy.result  # the one that produced this generation, before a restart
        cma_stop = run.strategy.stop()
        played = [f.games for f in fits]
        spent = Spent(games=sum(played))
        seconds = time.perf_counter() - self._asked_at
        with interrupts.deferred():
            state.finished = False  # a finished run told more is going on, as tune resume's
            state.generation = asked.generation
            state.games += spent.games
            state.evaluations += len(fits)
            state.seconds += seconds
            if cma_stop:
                state.cma_stop = CMA_STOP_PREFIX + ", ".join(sorted(cma_stop))
            step.update_elites(state, self._points, asked.weights, fits, asked.generation)
            row = step.history_row(state, asked.weights, fits, played,
                                   run.config.evaluation.games, spent, result)
            state.history.append(row)
            state.strategy = run.strategy.dumps()
            self._observers.generation_ended(GenerationRecord(
                asked.generation, asked.weights, fits, played, spent, row, {}, seconds, False),
                state)

    def close(self) -> None:
        """Let go of the run directory (a run never told anything leaves nothing behind)."""
        self._store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
