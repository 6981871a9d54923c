"""The game's rules for Python callers: moves, legality, spawns and the end of a game.

Thin wrappers over the compiled kernels, so Python code and the compiled search share one
implementation of every rule. Spawns come from an explicit SplitMix64 stream (see
``engine.kernels.spawn_tile``): a game's seed is the stream's initial state, so a seed gives the
same game in every process and on every machine.
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from engine import kernels
from engine.board import Board, check_board

# What a file of games (tune compare --save) records of the rules its games were played by:
# changed only with the rules themselves (docs/rules.md), so that games of other rules are never
# counted with these.
RULES = "2048 4x4, 32768 ceiling, spawns 2:0.9 4:0.1 from SplitMix64 (tune2048 rules 1)"


class Move(IntEnum):
    """The four moves, numbered as the compiled search numbers them."""

    UP = 0
    DOWN = 1
    LEFT = 2
    RIGHT = 3

    def __str__(self) -> str:
        return self.name.lower()


def apply_move(board: Board, move: Move | int) -> tuple[Board, int]:
    """The board after ``move`` and the points it earns; the board is unchanged if it is illegal."""
    b = np.uint64(check_board(board))
    return int(kernels.execute_move(b, int(move))), int(kernels.move_score(b, int(move)))


def legal_moves(board: Board) -> list[Move]:
    """The moves that change the board, in the order up, down, left, right."""
    return [m for m in Move if apply_move(board, m)[0] != board]


def is_game_over(board: Board) -> bool:
    """True when no move is legal."""
    return not legal_moves(board)


class SpawnStream:
    """The spawn sequence of one game: a SplitMix64 stream whose initial state is the seed."""

    def __init__(self, seed: int):
        self.state = np.uint64(seed % (1 << 64))

    def spawn(self, board: Board) -> Board:
        """Place a 2 (p 0.9) or a 4 (p 0.1) on a uniformly chosen empty cell."""
        new_board, self.state = kernels.spawn_tile(np.uint64(board), np.uint64(self.state))
        return int(new_board)


def new_game(stream: SpawnStream) -> Board:
    """An empty board with the game's first two spawns."""
    return stream.spawn(stream.spawn(0))
