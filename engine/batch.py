"""Play many games of one player, in this process or in a pool of worker processes.

Each worker builds its solver once and keeps it (and the compiled engine) warm for every game it
plays. Results come back in seed order whatever the order in which workers finish.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from engine.solver import DEFAULT_CUTOFF, GameResult, Solver


@dataclass(frozen=True)
class PlayerSpec:
    """Everything that decides how a player plays: a game is a function of this and a seed."""

    family: str
    weights: dict[str, float] = field(hash=False)
    depth: int
    cutoff: float = DEFAULT_CUTOFF

    def solver(self) -> Solver:
        return Solver(self.family, self.weights, self.depth, self.cutoff)


_worker_solver: Solver | None = None


def _init_worker(spec: PlayerSpec) -> None:
    global _worker_solver
    _worker_solver = spec.solver()


def _play_chunk(seeds: Sequence[int]) -> list[GameResult]:
    assert _worker_solver is not None
    return [_worker_solver.play(seed) for seed in seeds]


def play_games(
    spec: PlayerSpec,
    seeds: Sequence[int],
    workers: int = 1,
    on_game: Callable[[GameResult], None] | None = None,
) -> list[GameResult]:
    """Play one game per seed; ``on_game`` is called as each game finishes (for progress)."""
    notify = on_game or (lambda _result: None)
    if workers <= 1:
        solver = spec.solver()
        results = []
        for seed in seeds:
            results.append(solver.play(seed))
            notify(results[-1])
        return results
    chunks = [list(seeds[i : i + 4]) for i in range(0, len(seeds), 4)]
    context = multiprocessing.get_context("spawn")
    results = []
    with ProcessPoolExecutor(workers, context, _init_worker, (spec,)) as pool:
        for chunk_results in pool.map(_play_chunk, chunks):
            for result in chunk_results:
                notify(result)
            results.extend(chunk_results)
    return results
