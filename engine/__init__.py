"""tune2048's engine: exact 2048 on a 64-bit bitboard, heuristic families, fixed-depth expectimax.

    >>> from engine import Solver
    >>> solver = Solver.from_file("configs/weights/classic-reference.yaml", depth=1)
    >>> result = solver.play(seed=7)
"""

from engine.board import Board, BoardError, board_to_grid, format_board, parse_board
from engine.families import FAMILIES, get_family
from engine.rules import Move, apply_move, is_game_over, legal_moves
from engine.solver import DEFAULT_CUTOFF, GameResult, Solver
from engine.weights_file import WeightsFile, WeightsFileError, read_weights, write_weights

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
