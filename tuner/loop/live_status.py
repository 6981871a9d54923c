"""The live status: an observer that keeps ``status.json`` (``tuner.store.status_file``) up to
date, so that ``tune status RUN_DIR`` can tell from any shell whether the run is alive and where
it stands.

It writes as the job starts (``begin``), after every generation, every ``HEARTBEAT_SECONDS``
at most while games are played (so that a long generation is still heard from), when the run
has validated its winner (done), and when the job ends otherwise (``end``: stopped,
interrupted, failed). It reads the run's state and writes; nothing of the run reads it back.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from tuner import interrupts
from tuner.config import RunConfig
from tuner.games import throughput
from tuner.loop.observers import Observer, eta_seconds, generation_label
from tuner.loop.record import GenerationRecord, ValidationRow
from tuner.store.checkpoint import RunState
from tuner.store.status_file import (
    RUNNING,
    STATES,
    RunStatus,
    process_start,
    status_text,
    this_host,
)
from tuner.store.store import RunStore

HEARTBEAT_SECONDS = 30.0


class LiveStatus(Observer):
    """``status.json`` for the job working on ``state`` in ``store``. ``idle_rate``: one idle
    core's positions per second at the run's settings (``tuner.games.throughput.calibrate``);
    ``clock``: wall-clock seconds since the epoch (a test's own); ``resume``: the job's options
    that a resume takes, kept for ``tune status`` and ``tune stop``."""

    def __init__(self, config: RunConfig, store: RunStore, state: RunState,
                 idle_rate: float | None = None, clock: Callable[[], float] = time.time,
                 resume: dict | None = None):
        self.config = config
        self.resume = resume
        self.store = store
        self.state = state
        self.idle_rate = idle_rate
        self.clock = clock
        self.pid = os.getpid()
        self.host = this_host()
        self.process_start = process_start(self.pid)
        self.started = clock()
        self.phase: tuple[str, int, bool] = ("", 0, False)
        self.played = 0
        self.last_write = -HEARTBEAT_SECONDS
        self.figures: dict[str, float | int | None] = {}
        self.ended: str | None = None

    def begin(self, event: str) -> None:
        """The job has started, or resumed, the run."""
        self.write(RUNNING, event)

    def games_started(self, label: str, total: int, up_to: bool) -> None:
        self.phase, self.played = (label, total, up_to), 0

    def games_played(self, count: int) -> None:
        self.played += count
        if time.monotonic() - self.last_write >= HEARTBEAT_SECONDS:
            label, total, up_to = self.phase
            with interrupts.deferred():  # a status file is whole or as it was
                self.write(RUNNING, f"{label}: {self.played:,} of {'up to ' if up_to else ''}"
                                    f"{total:,} games played")

    def generation_ended(self, record: GenerationRecord, state: RunState) -> None:
        machines, spent = record.machines, record.spent
        self.figures = {
            "cpus": machines["cpus"],
            "share": machines["share"],
            "idle_cores": throughput.idle_cores(
                throughput.positions_here(spent.positions, spent.seconds, spent.seconds_here),
                machines["seconds"], self.idle_rate),
            "eta_seconds": eta_seconds(self.config, state, record),
        }
        self.write(RUNNING, f"{generation_label(self.config, record.generation)} checkpointed")

    def validation_ended(self, rows: list[ValidationRow], winner: ValidationRow,
                         state: RunState) -> None:
        self.figures["eta_seconds"] = 0.0
        self.end("done", f"{state.stop_reason}; validated {len(rows)}, winner {winner.label}")

    def end(self, state: str, event: str) -> None:
        """The job ends the run's work in ``state`` (one of ``tuner.store.status_file.ENDED``)."""
        assert state in STATES and state != RUNNING, state
        self.ended = state
        self.write(state, event)

    def write(self, state: str, event: str) -> None:
        s = self.state
        top = s.elites[0] if s.elites else None
        self.store.write_status(status_text(RunStatus(
            run=self.config.run.name, state=state, pid=self.pid, host=self.host,
            process_start=self.process_start, generation=s.generation,
            max_generations=self.config.cmaes.max_generations, games=s.games,
            best_fitness=top.fitness if top else None, best_stderr=top.stderr if top else None,
            best_generation=top.generation if top else None,
            fitness=self.config.evaluation.fitness,
            cpus=self.figures.get("cpus"), share=self.figures.get("share"),
            idle_cores=self.figures.get("idle_cores"), idle_rate=self.idle_rate,
            generation_seconds=s.seconds / s.generation if s.generation else None,
            eta_seconds=self.figures.get("eta_seconds"),
            event=" ".join(event.split()),  # one line
            started=self.started, updated=self.clock(), resume=self.resume)))
        self.last_write = time.monotonic()
