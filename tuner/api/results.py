"""A run's results read back: its config, history, validation and best weights, checked as
``tune report`` checks them, so that a caller never parses a run's files by hand."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.weights_file import WeightsFile
from tuner.analysis import report
from tuner.analysis.gains import gains, validated_winner, validation_parts
from tuner.config import START
from tuner.errors import CheckpointError

if TYPE_CHECKING:
    from tuner.games.fitness import Gain
from tuner.store import checkpoint as ckpt


@dataclass(frozen=True)
class RunResults:
    """What a run directory holds. ``config``: the run's resolved config as stored;
    ``history``: a row per generation (``history.csv``: numbers as floats); ``validation``: a
    row per validated candidate, and for the start and a baseline reference (``validation.csv``;
    empty until the run has validated; ``winner``, ``start`` and ``vs_start`` pick it apart);
    ``best``: ``best.yaml`` (the validated winner once the run has finished, the best training
    fitness so far before; None where a run directory keeps only its config and history)."""

    run_dir: Path
    config: dict[str, Any]
    history: list[dict[str, Any]]
    validation: list[dict[str, Any]]
    best: WeightsFile | None

    @property
    def finished(self) -> bool:
        """Whether the run has validated its winner."""
        return bool(self.validation)

    @property
    def winner(self) -> dict[str, Any] | None:
        """The winner's row of ``validation`` (its weights are ``best``'s); None until the run
        has validated."""
        return validated_winner(self.validation, self.config)

    @property
    def start(self) -> dict[str, Any] | None:
        """The start's row of ``validation``: the initial point, played on the winner's
        validation games (``validation.start``); None where the run did not validate it (not
        yet, ``validation.start: false``, or a run of tune2048 before 0.4)."""
        return validation_parts(self.validation, self.config)[0]

    @property
    def vs_start(self) -> Gain | None:
        """How far the winner is above the start: the difference of their fitness on the same
        games, paired game by game, with its standard error and 95% half-width (``ci95``),
        ``within_noise`` where that interval holds 0, and ``words()`` as ``tune report`` says
        it; None without a validated start."""
        return next((g for g in gains(self.validation, self.config)
                     if g.mark == START), None)


def open_run(run_dir: str | os.PathLike) -> RunResults:
    """The results in ``run_dir``, read whole now; ``CheckpointError`` naming the file, line and
    column of anything missing or damaged."""
    run_dir = ckpt.run_directory(run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: no such run directory")
    stored, config = report.read_run_config(run_dir)
    history = report.read_rows(run_dir / ckpt.HISTORY_FILE, report.HISTORY_COLUMNS,
                               required=True)
    validation = report.read_rows(run_dir / ckpt.VALIDATION_FILE, report.VALIDATION_COLUMNS,
                                  required=False)
    best = report.read_best(run_dir, config, validated=bool(validation))
    return RunResults(run_dir, stored, history, validation, best)
