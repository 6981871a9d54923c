"""tune2048's engine: exact 2048 on a 64-bit bitboard, heuristic families, expectimax at a fixed
depth or a depth policy (``engine.depth``).

    >>> from engine import Solver
    >>> solver = Solver.from_file("classic-reference", depth=1)
    >>> result = solver.play(seed=7)

The names below are imported on first use, so that reading a config or a weights file (which
imports ``engine.yaml_text`` and ``engine.families``) never pays for numba and the compiled
kernels.
"""

import importlib

from engine.blas import pin_kernels

pin_kernels()  # before anything loads numpy (engine.blas)

_EXPORTS = {
    "Board": "engine.board",
    "BoardError": "engine.board",
    "board_to_grid": "engine.board",
    "format_board": "engine.board",
    "parse_board": "engine.board",
    "FAMILIES": "engine.families",
    "get_family": "engine.families",
    "Move": "engine.rules",
    "apply_move": "engine.rules",
    "is_game_over": "engine.rules",
    "legal_moves": "engine.rules",
    "DEFAULT_CUTOFF": "engine.solver",
    "GameResult": "engine.solver",
    "Solver": "engine.solver",
    "WeightsFile": "engine.weights_file",
    "WeightsFileError": "engine.weights_file",
    "read_weights": "engine.weights_file",
    "write_weights": "engine.weights_file",
}

__all__ = [
    "DEFAULT_CUTOFF",
    "FAMILIES",
    "Board",
    "BoardError",
    "GameResult",
    "Move",
    "Solver",
    "WeightsFile",
    "WeightsFileError",
    "apply_move",
    "board_to_grid",
    "format_board",
    "get_family",
    "is_game_over",
    "legal_moves",
    "parse_board",
    "read_weights",
    "write_weights",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'engine' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
