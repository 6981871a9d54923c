"""A candidate scored on a position set, game by game, where games are played: what a run whose
fitness is a position objective hands its workers in place of games.

A unit of such work is a candidate and some of the set's games (their indices stand where
seeds stand for games); each comes back as a ``ScoredGame``, the objective's row of sums for
that game (``engine.positions.objectives``), so that the driver puts a candidate's games
together in the set's order whatever the workers and the order they finish in.
"""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from engine.errors import BadInput
from engine.positions.objectives import OBJECTIVES
from engine.positions.set_file import PositionSet, read_positions
from engine.solver import PlayerSpec, Solver


@dataclass(frozen=True)
class PositionScorer:
    """A candidate's player and what it is scored by: an objective on the set at ``path``,
    whose digest is ``sha256``. Where the set was shipped to other machines with the job,
    ``package`` is the package it came in, and ``path`` its name there."""

    player: PlayerSpec
    objective: str
    path: str
    sha256: str
    package: str = ""

    @property
    def depth(self):
        return self.player.depth

    def positions(self) -> PositionSet:
        """The set, read once per process and checked to be the one the run began with."""
        path = self.path
        if self.package:
            found = importlib.util.find_spec(self.package)
            if found is None or not found.submodule_search_locations:
                raise BadInput(f"position set {self.path}: its shipped copy ({self.package}) "
                               "is not on this worker")
            path = str(Path(next(iter(found.submodule_search_locations))) / self.path)
        return _read_once(path, self.sha256)


@dataclass(frozen=True)
class ScoredGame:
    """One game of the set scored for a candidate: its index in the set (``seed``, as units
    name it), the objective's row for it, the positions its scoring evaluated
    (``moves_evaluated``, as a game counts them) and the seconds it took."""

    seed: int
    row: np.ndarray
    moves_evaluated: int
    seconds: float


def score_games(scorer: PositionScorer, solver: Solver, games: list[int]) -> list[ScoredGame]:
    """The candidate's ``solver`` on each of ``games`` (indices into the set)."""
    positions = scorer.positions()
    objective = OBJECTIVES[scorer.objective]
    scored = []
    for game in games:
        start = time.perf_counter()
        rows, evaluated = objective.per_game(solver, positions, np.array([game]))
        scored.append(ScoredGame(game, rows[0], evaluated, time.perf_counter() - start))
    return scored


@lru_cache(maxsize=2)
def _read_once(path: str, sha256: str) -> PositionSet:
    positions = read_positions(path)
    if positions.sha256 != sha256:
        raise BadInput(f"position set {path}: it changed since the run began (its digest "
                       f"{positions.sha256[:12]}..., not {sha256[:12]}...)")
    return positions
