"""Positions sampled from a player's games and labelled by a deeper search, the *oracle*: the
data a position-based fitness scores candidates on, at the cost of a search per position
instead of a game per sample.

A game is played by the player from its seed; each position where a move is to be made is taken
with probability ``1 / every``, drawn from a stream of the seed's own apart from its spawns (so
which positions are taken never depends on anything but the seed, and the game is the one the
player plays without sampling); the oracle then values every legal move of each position taken.
How the game went (its final score and largest tile) labels its positions too. A labelled game
is a pure function of the sampler and the seed, as a game is of its player and seed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from engine.solver import PlayerSpec, Solver

# The stream that picks positions: SeedSequence([seed, SAMPLING_STREAM]), never a spawn's.
SAMPLING_STREAM = 0x706F736974696F6E  # "position"


@dataclass(frozen=True)
class PositionSampler:
    """What decides a position set's games and labels; what the evaluators send to their
    workers in place of a player (``play_unit``)."""

    player: PlayerSpec  # plays the games positions are taken from
    oracle: PlayerSpec  # values every legal move of each position taken
    every: int  # a position is taken with probability 1 / every

    @property
    def depth(self):
        """The search that sizes a unit of work before any has been timed: the oracle's, whose
        searches cost most of it."""
        return self.oracle.depth

    def to_dict(self) -> dict:
        return {"player": self.player.to_dict(), "oracle": self.oracle.to_dict(),
                "every": self.every}


@dataclass(frozen=True)
class LabelledGame:
    """One game's positions taken and their labels, with what the game and the labels cost.
    ``board``, ``move`` (moves played before the position), ``score_before`` (the score then)
    and ``values`` (the oracle's value of up, down, left, right; NaN where illegal) hold one
    row per position, in the order played."""

    seed: int
    score: int
    max_tile: int
    moves: int
    seconds: float  # wall seconds of the game and its labels: what sizes units of work
    player_positions: int  # positions the player's searches evaluated over the whole game
    oracle_positions: int  # positions the oracle's searches evaluated
    player_cpu: float  # CPU seconds of the game
    oracle_cpu: float  # CPU seconds of the labels
    board: np.ndarray
    move: np.ndarray
    score_before: np.ndarray
    values: np.ndarray


def taken(seed: int, moves: int, every: int) -> np.ndarray:
    """The moves (0-based) of a game of ``moves`` decisions whose positions are taken: move i
    is taken when the i-th draw of the seed's sampling stream is below ``1 / every``."""
    draws = np.random.default_rng([seed % (1 << 64), SAMPLING_STREAM]).random(moves)
    return np.flatnonzero(draws < 1.0 / every)


def label_game(player: Solver, oracle: Solver, seed: int, every: int) -> LabelledGame:
    """Play ``seed`` with ``player``, take positions (``taken``) and label them with
    ``oracle``."""
    boards: list[int] = []
    scores: list[int] = []
    wall, cpu = time.perf_counter(), time.process_time()
    game = player.play(seed, on_move=lambda board, _move, score: (boards.append(board),
                                                                  scores.append(score)))
    played_cpu = time.process_time() - cpu
    picks = taken(seed, len(boards), every)
    values = np.full((len(picks), 4), np.nan)
    oracle_positions = 0
    cpu = time.process_time()
    for row, index in enumerate(picks):
        decision = oracle.decide(boards[index])
        oracle_positions += decision.positions
        for move, value in decision.values.items():
            if value is not None:
                values[row, int(move)] = value
    return LabelledGame(
        seed=game.seed, score=game.score, max_tile=game.max_tile, moves=game.moves,
        seconds=time.perf_counter() - wall, player_positions=game.moves_evaluated,
        oracle_positions=oracle_positions, player_cpu=played_cpu,
        oracle_cpu=time.process_time() - cpu,
        board=np.array([boards[i] for i in picks], dtype=np.uint64),
        move=picks.astype(np.int64),
        score_before=np.array([scores[i] for i in picks], dtype=np.int64),
        values=values,
    )
