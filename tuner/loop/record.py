"""What a generation step and a validation return: plain records that observers turn into
files, log lines and progress, so that nothing watching a run reaches inside the loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.solver import GameResult
from tuner.games.fitness import Fitness


@dataclass
class Spent:
    """What a generation's training games cost: games, CPU-seconds (``cluster.csv``), and
    positions evaluated by their searches (``history.csv``'s ``positions``: the same on every
    machine, and fair between weights that play longer or shorter games); of those, the games
    kept from an earlier sitting (``tuner.games.kept``) and their CPU-seconds, which this
    sitting did not spend."""

    games: int = 0
    seconds: float = 0.0
    positions: int = 0
    kept: int = 0
    kept_seconds: float = 0.0

    @property
    def seconds_here(self) -> float:
        """The CPU-seconds of the games this sitting played: what its CPUs' time went to."""
        return self.seconds - self.kept_seconds

    def add(self, results: list[list[GameResult]]) -> None:
        for games in results:
            self.games += len(games)
            self.seconds += sum(r.seconds for r in games)
            self.positions += sum(r.moves_evaluated for r in games)


@dataclass(frozen=True)
class GenerationRecord:
    """One generation, as it happened: its candidates' weights and fitness (in the order the
    strategy asked them), the games each played, what its games cost, its ``history.csv`` row
    and ``cluster.csv`` row, and its wall time."""

    generation: int
    weights: list[dict[str, float]]
    fits: list[Fitness]
    played: list[int]
    spent: Spent
    row: dict[str, Any]
    machines: dict[str, Any]
    seconds: float
    racing: bool


@dataclass(frozen=True)
class ValidationRow:
    """One candidate's result on the validation seeds; ``vs_start``: its fitness less the
    start's, paired on those seeds (None where the start was not validated)."""

    label: str
    generation: int
    weights: dict[str, float]
    fitness: Fitness
    mean_score: float
    ci95: float
    reach: dict[int, float]
    vs_start: Fitness | None = None
