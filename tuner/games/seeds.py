"""Game seeds, derived from the run seed and indices only (never from time or global state).

Training seeds have the top bit clear and validation seeds have it set, so the two sets never
overlap. Within a generation every candidate plays the same seeds (common random numbers); the
seeds change every generation.
"""

from __future__ import annotations

import numpy as np

TOP_BIT = np.uint64(1 << 63)
LOW_BITS = np.uint64((1 << 63) - 1)
# stream 2 drew the re-evaluations' seeds until tune2048 0.4.0: the others keep their numbers,
# and with them their seeds
TRAINING, VALIDATION, NOISE = 0, 1, 3


def _derive(run_seed: int, stream: int, index: int, count: int) -> np.ndarray:
    return np.random.SeedSequence([run_seed, stream, index]).generate_state(count, np.uint64)


def training_seeds(run_seed: int, generation: int, count: int) -> list[int]:
    """The seeds every candidate of ``generation`` plays."""
    return [int(s & LOW_BITS) for s in _derive(run_seed, TRAINING, generation, count)]


def noise_seeds(run_seed: int, count: int) -> list[int]:
    """Seeds for measuring fitness noise at the initial point."""
    return [int(s & LOW_BITS) for s in _derive(run_seed, NOISE, 0, count)]


def validation_seeds(run_seed: int, count: int) -> list[int]:
    """The held-out seeds of the final validation (disjoint from every training seed)."""
    return [int(s | TOP_BIT) for s in _derive(run_seed, VALIDATION, 0, count)]
