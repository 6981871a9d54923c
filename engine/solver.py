"""The solver API: a heuristic family with weights, searched by expectimax at a depth policy.

A game is a pure function of (family, weights, depth policy, cutoff, transposition table, seed):
the search is deterministic (every policy counts, never times: ``engine.depth``) and spawns come
from the seed's own SplitMix64 stream.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass

import numba
import numpy as np

from engine import finite, kernels
from engine.board import Board, as_board
from engine.defaults import DEFAULT_CUTOFF, MILESTONES
from engine.depth import DepthError, DepthPolicy, chosen_depth, parse_depth, policy_params, to_yaml
from engine.families import Family, HeuristicError, family_code, get_family
from engine.families.guard import family_code_error
from engine.families.registry import check_definition
from engine.rules import Move, SpawnStream, apply_move, new_game
from engine.signals import deferred_interrupts
from engine.weights_file import WeightsFileError, read_weights
from engine.workspace import build_workspace


@dataclass(frozen=True)
class GameResult:
    """How one game went."""

    seed: int
    score: int
    max_tile: int
    moves: int
    seconds: float
    moves_evaluated: int
    final_board: Board

    def reached(self, tile: int) -> bool:
        """Whether the game made a tile of at least ``tile``."""
        return self.max_tile >= tile

    @property
    def milestones(self) -> dict[int, bool]:
        """Whether 2048, 4096, 8192, 16384 and 32768 were reached."""
        return {tile: self.reached(tile) for tile in MILESTONES}

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Decision:
    """One move's search: the move (None: no legal move), every move's value (None: illegal),
    the depth searched (under a node budget, the deepest that completed) and the positions
    evaluated, every depth's search counted."""

    move: Move | None
    values: dict[Move, float | None]
    depth: int
    positions: int


class Solver:
    """Expectimax at a depth policy, guided by a heuristic family at given weights.

    Args:
        family: a ``Family``, or a spec (``engine.families.get_family``): a built-in or
            registered name, ``module:Class``, or ``file.py:Class`` (relative to the working
            directory; naming a file or module here imports it).
        weights: {name: value}, a sequence in the family's parameter order, or None for defaults.
        depth: chance layers searched after each candidate move (0 = heuristic right after it),
            or a policy that picks them per move (``engine.depth``: ``"auto"``,
            ``ByBoard(cap=6)``, ``NodeBudget(200_000)``, or their text forms).
        cutoff: cumulative-probability cutoff; 0 searches the exact fixed depth.
        transposition: use the transposition table (it never changes results without a cutoff).
    """

    def __init__(
        self,
        family: str | Family,
        weights: Mapping[str, float] | Sequence[float] | None = None,
        depth: DepthPolicy | str = 1,
        cutoff: float = DEFAULT_CUTOFF,
        transposition: bool = True,
    ):
        self.family = get_family(family) if isinstance(family, str) else check_definition(family)
        if weights is None:
            weights = self.family.defaults()
        if isinstance(weights, Mapping):
            vector = self.family.vector(dict(weights))
        else:
            vector = self.family.vector(dict(zip(self.family.param_names, weights, strict=True)))
        try:
            policy = parse_depth(depth)
        except DepthError as err:
            raise DepthError(f"depth: {err}") from None
        if not 0.0 <= cutoff < 1.0:
            raise ValueError(f"cutoff must be in [0, 1), got {cutoff!r}")
        self.weights = self.family.named(vector)
        self.depth = policy
        self._policy = tuple(np.int64(p) for p in policy_params(policy))
        self.cutoff = float(cutoff)
        self.transposition = transposition
        try:
            # an overflow is reported below, naming the weights to blame, not warned about
            with family_code(self.family, "heuristic()", passing=(ArithmeticError,)), \
                    np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                heuristic = self.family.heuristic(vector)
            self._ws, self._terms = build_workspace(heuristic, self.cutoff, transposition)
        except (HeuristicError, ArithmeticError) as err:
            # math.pow overflowing at some weights is the weights' fault: say which weight; an
            # arithmetic error no weight is to blame for is the family's code's
            blame = finite.blame(self.family, vector)
            if isinstance(err, ArithmeticError) and not blame:
                raise family_code_error(self.family, "heuristic()", err) from err
            problem = str(err) if isinstance(err, HeuristicError) else (
                f"computing it fails: {type(err).__name__}: {err}")
            raise HeuristicError(
                f"family {self.family.name!r} at weights {self.weights}: {problem}{blame}"
            ) from None
        self._values = np.zeros(4)
        self._scratch = np.zeros(4)
        self._kernels = compiled_kernels(numba.typeof(self._ws), numba.typeof(self._terms))

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike,
        depth: DepthPolicy | str | None = None,
        cutoff: float = DEFAULT_CUTOFF,
        transposition: bool = True,
        family_files: Collection[str | os.PathLike] = (),
        family_modules: Collection[str] = (),
    ) -> Solver:
        """Load a weights file; search at the depth policy it records unless ``depth`` is
        given.

        A weights file whose family lives in a file loads only if that file is in
        ``family_files``, and one whose family is ``module:Class`` only if the module is in
        ``family_modules``: reading a weights file never runs code that only it names.
        """
        loaded = read_weights(path, family_files, family_modules)
        if loaded.engine is not None:
            raise WeightsFileError(f"{path}: holds weights of engine {loaded.engine!r}, not of a "
                                   "family: play them in that engine (tune play --engine COMMAND)")
        return cls(
            loaded.family,
            loaded.weights,
            chosen_depth(depth, loaded.depth),
            cutoff,
            transposition,
        )

    def __repr__(self) -> str:
        return (f"Solver({self.family.name!r}, depth={to_yaml(self.depth)!r}, "
                f"cutoff={self.cutoff})")

    def move_values(self, board: Board | Sequence[Sequence[int]]) -> dict[Move, float | None]:
        """The expectimax value of every move (None when a move is illegal)."""
        return self.decide(board).values

    def best_move(self, board: Board | Sequence[Sequence[int]]) -> Move | None:
        """The move with the highest expected value; None when no move is legal."""
        best = self._search(as_board(board))
        return None if best < 0 else Move(best)

    def decide(self, board: Board | Sequence[Sequence[int]]) -> Decision:
        """The whole decision on ``board``: the move, the values, the depth the policy searched
        and what it cost."""
        before = self._ws[kernels.WS_MOVES]
        best = self._search(as_board(board))
        return Decision(
            move=None if best < 0 else Move(best),
            values={m: (None if self._values[m] < 0 else float(self._values[m])) for m in Move},
            depth=int(self._ws[kernels.WS_DEPTH]),
            positions=int(self._ws[kernels.WS_MOVES] - before),
        )

    def evaluate(self, board: Board | Sequence[Sequence[int]]) -> float:
        """The heuristic value of a board, as the search scores a leaf."""
        return float(
            self._kernels.heuristic_value(np.uint64(as_board(board)), self._ws, self._terms)
        )

    def play(
        self,
        seed: int,
        max_moves: int | None = None,
        on_move: Callable[[Board, Move, int], None] | None = None,
    ) -> GameResult:
        """Play one game from ``seed`` until no move is legal (or ``max_moves`` moves).

        Without ``on_move`` the whole game runs in compiled code. With it, the same kernels are
        driven from Python and ``on_move(board_before, move, score_so_far)`` is called each move;
        both paths play the identical game.
        """
        seed = int(seed) % (1 << 64)
        if max_moves is not None and max_moves < 0:
            raise ValueError(f"max_moves must be at least 0, got {max_moves!r}")
        limit = -1 if max_moves is None else int(max_moves)
        start = time.perf_counter()
        if on_move is None:
            board, score, moves, evaluated = self._kernels.play_game(
                np.uint64(seed), *self._policy, self._ws, np.int64(limit), self._terms
            )
        else:
            board, score, moves, evaluated = self._play_stepwise(seed, limit, on_move)
        board = int(board)
        top = max((board >> (4 * i)) & 0xF for i in range(16))
        return GameResult(
            seed=seed,
            score=int(score),
            max_tile=(1 << top) if top else 0,
            moves=int(moves),
            seconds=time.perf_counter() - start,
            moves_evaluated=int(evaluated),
            final_board=board,
        )

    def _play_stepwise(self, seed: int, limit: int, on_move) -> tuple[int, int, int, float]:
        stream = SpawnStream(seed)
        board = new_game(stream)
        score = moves = 0
        evaluated = 0.0
        while limit < 0 or moves < limit:
            self._ws[kernels.WS_MOVES] = 0.0
            move = self.best_move(board)
            evaluated += self._ws[kernels.WS_MOVES]
            if move is None:
                break
            on_move(board, move, score)
            board, points = apply_move(board, move)
            score += points
            board = stream.spawn(board)
            moves += 1
        return board, score, moves, evaluated

    def _search(self, board: Board) -> int:
        return int(
            self._kernels.decide(np.uint64(board), *self._policy, self._ws, self._values,
                                 self._scratch, self._terms)
        )


@dataclass(frozen=True)
class _Kernels:
    """The compiled kernels for one heuristic shape, called directly.

    Calling a numba dispatcher types its arguments on every call, and for the terms' named
    tuples that costs about a microsecond, a third of a depth-1 decision; the compiled entry
    point, looked up once, skips it.
    """

    decide: Callable
    play_game: Callable
    heuristic_value: Callable


def compiled_kernels(workspace_type, terms_type) -> _Kernels:
    """The kernels for one heuristic shape, loaded from numba's cache (or compiled) with Ctrl-C
    held until they are (``engine.signals``)."""
    u64, i64, f64_array = numba.types.uint64, numba.types.int64, workspace_type
    with deferred_interrupts():
        return _Kernels(
            decide=kernels.decide.compile(
                (u64, i64, i64, i64, i64, f64_array, f64_array, f64_array, terms_type)),
            play_game=kernels.play_game.compile(
                (u64, i64, i64, i64, i64, f64_array, i64, terms_type)),
            heuristic_value=kernels.heuristic_value.compile((u64, f64_array, terms_type)),
        )


@dataclass(frozen=True)
class PlayerSpec:
    """Everything that decides how a player plays: a game is a function of this and a seed.

    What the tuner's evaluators send to their workers, which build the ``Solver`` once and keep it
    for every game it plays."""

    family: str
    weights: dict[str, float]
    depth: DepthPolicy
    cutoff: float = DEFAULT_CUTOFF

    def __hash__(self) -> int:
        # the weights, a dict, left out by hand: a field(hash=False) would run Python code in
        # __set_name__ as this module loads, where Python 3.11 turns a Ctrl-C into RuntimeError
        return hash((self.family, self.depth, self.cutoff))

    def solver(self) -> Solver:
        return Solver(self.family, self.weights, self.depth, self.cutoff)

    def to_dict(self) -> dict:
        """What decides the player's games, as files record it (the depth as a config writes
        it)."""
        return {"family": self.family, "weights": dict(self.weights),
                "depth": to_yaml(self.depth), "cutoff": self.cutoff}
