"""Game seeds, derived from the run seed and indices only (never from time or global state).

Training seeds have the top bit clear and validation seeds have it set, so the two sets never
overlap. The games a position set is built from (``position_seeds``) have the top bit clear and
the next one set: never a validation seed, nor one that ``tune compare`` plays by default (from
1e9 up). Within a generation every candidate plays the same seeds (common random numbers); the
seeds change every generation.
"""

from __future__ import annotations

import numpy as np

TOP_BIT = np.uint64(1 << 63)
LOW_BITS = np.uint64((1 << 63) - 1)
POSITIONS_BIT = np.uint64(1 << 62)
TRAINING, VALIDATION, REEVALUATION, NOISE, POSITIONS, SET_GAMES = 0, 1, 2, 3, 4, 5


def _derive(run_seed: int, stream: int, index: int, count: int) -> np.ndarray:
    return np.random.SeedSequence([run_seed, stream, index]).generate_state(count, np.uint64)


def training_seeds(run_seed: int, generation: int, count: int) -> list[int]:
    """The seeds every candidate of ``generation`` plays."""
    return [int(s & LOW_BITS) for s in _derive(run_seed, TRAINING, generation, count)]


def reevaluation_seeds(run_seed: int, generation: int, count: int) -> list[int]:
    """Fresh training seeds for re-evaluating a generation's best candidates."""
    return [int(s & LOW_BITS) for s in _derive(run_seed, REEVALUATION, generation, count)]


def noise_seeds(run_seed: int, count: int) -> list[int]:
    """Seeds for measuring fitness noise at the initial point."""
    return [int(s & LOW_BITS) for s in _derive(run_seed, NOISE, 0, count)]


def validation_seeds(run_seed: int, count: int) -> list[int]:
    """The held-out seeds of the final validation (disjoint from every training seed)."""
    return [int(s | TOP_BIT) for s in _derive(run_seed, VALIDATION, 0, count)]


def position_seeds(set_seed: int, count: int) -> list[int]:
    """The seeds of the games a position set of seed ``set_seed`` is built from."""
    return [int((s & LOW_BITS) | POSITIONS_BIT) for s in _derive(set_seed, POSITIONS, 0, count)]


def set_games(run_seed: int, generation: int, count: int, total: int,
              again: bool = False) -> list[int]:
    """The games of a run's position set (indices, ascending) that every candidate of
    ``generation`` is scored on: all ``total`` of them, or a draw of ``count`` without
    replacement, fresh each generation (``again``: another draw, for a second look)."""
    if count >= total:
        return list(range(total))
    rng = np.random.default_rng([run_seed, SET_GAMES, generation, int(again)])
    return sorted(int(game) for game in rng.choice(total, count, replace=False))
