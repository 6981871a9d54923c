"""``check_family``: the verification the built-in families get in the test suite, for any family.

It checks, in order, and stops at the first failure with a ``FamilyCheckError`` that names what is
wrong:

1. parameters: unique identifier names, finite ranges with low < high, defaults inside, a doc;
2. tables: the heuristic builds (right layouts, shapes, dtypes) and is finite, at the defaults
   and at random weights inside the documented ranges;
3. compiled against reference: the compiled evaluation equals ``reference`` within a relative
   1e-9 (of the larger of the value and the heuristic's scale, since terms may cancel) on random
   boards and on every position of real games;
4. live over dead: every live board checked scores above 0, a dead board's value, as the search
   sees it; and a depth-1 search on real positions gives finite values, above 0 for every move
   but one after which every spawn loses (worth 0 exactly, as a dead board).

A heuristic may be negative everywhere: the search floors leaf values (``engine.kernels``), so
live boards still beat dead ones. Whatever the family's own code raises is one line naming its
file and line (``FamilyCodeError``, ``engine.families.guard``); a family whose ``params`` the
engine cannot use at all is refused first (``FamilyDefinitionError``).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from engine import kernels
from engine.board import board_to_ranks, format_board_text, ranks_to_board
from engine.echo import echo
from engine.errors import BadInput
from engine.families import Family, FamilyDefinitionError, HeuristicError, family_code
from engine.families.registry import check_definition
from engine.rules import Move, apply_move, is_game_over
from engine.solver import Solver, compiled_kernels
from engine.workspace import build_workspace

TOLERANCE = 1e-9
RANDOM_WEIGHT_SETS = 4
DENSITIES = (0.0, 0.15, 0.4, 0.7, 0.9, 1.0)
GAMES = 3


class FamilyCheckError(BadInput):
    """A family failed a check; the message says which and shows the weights or the board."""


def check_family(family: Family, boards: int = 10_000, seed: int = 0) -> list[str]:
    """Run every check; return one line per check passed, or raise ``FamilyCheckError`` (or
    ``FamilyDefinitionError``, ``FamilyCodeError``: see the module docstring)."""
    try:
        check_definition(family)
    except FamilyDefinitionError as err:
        raise FamilyCheckError(str(err)) from None
    rng = np.random.default_rng(seed)
    done = [_check_params(family)]
    weight_sets = [family.vector(family.defaults())] + [
        np.array([rng.uniform(p.low, p.high) for p in family.params])
        for _ in range(RANDOM_WEIGHT_SETS)
    ]
    compiled = [_compiled(family, w) for w in weight_sets]
    done.append(f"tables: built and finite at the defaults and at {RANDOM_WEIGHT_SETS} random "
                "weight vectors inside the ranges")
    positions = _game_positions(family)
    random_boards = [_random_ranks(rng, DENSITIES[i % len(DENSITIES)]) for i in range(boards)]
    for i, (weights, evaluate) in enumerate(zip(weight_sets, compiled)):
        grids = random_boards if i == 0 else random_boards[: max(boards // 5, 1)]
        for ranks in grids + positions:
            _compare(family, weights, evaluate, ranks)
    done.append(f"reference: compiled equals reference (relative {TOLERANCE:g}) on {boards:,} "
                f"random boards at the defaults, {max(boards // 5, 1):,} at each random weight "
                f"vector, and {len(positions):,} positions of {GAMES} real games")
    done.append(_check_live_over_dead(family, weight_sets, random_boards, positions))
    return done


def _check_params(family: Family) -> str:
    if not family.params:
        raise FamilyCheckError("the family declares no parameters")
    names = [p.name for p in family.params]
    for p in family.params:
        if not isinstance(p.name, str) or not p.name.isidentifier():
            raise FamilyCheckError(f"parameter {p.name!r}: a name must be an identifier")
        if names.count(p.name) > 1:
            raise FamilyCheckError(f"parameter {p.name!r} is declared twice")
        numbers = (p.default, p.low, p.high)
        if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in numbers):
            raise FamilyCheckError(f"parameter {p.name!r}: default, low and high must be finite "
                                   f"numbers (a documented range), got {numbers}")
        if not p.low < p.high:
            raise FamilyCheckError(f"parameter {p.name!r}: the range needs low < high, got "
                                   f"[{p.low}, {p.high}]")
        if not p.low <= p.default <= p.high:
            raise FamilyCheckError(f"parameter {p.name!r}: default {p.default} is outside its "
                                   f"range [{p.low}, {p.high}]")
        if not p.doc:
            raise FamilyCheckError(f"parameter {p.name!r}: says nothing about what it means")
    return f"parameters: {len(names)}, each with a name, a range, a default inside it and a doc"


def _compiled(family: Family, weights: np.ndarray):
    """A function giving the compiled, unfloored heuristic of a grid at these weights."""
    try:
        with family_code(family, f"heuristic() at weights {_named(family, weights)}"):
            heuristic = family.heuristic(weights)
        ws, terms = build_workspace(heuristic, 0.0, False, 1)
    except HeuristicError as err:
        raise FamilyCheckError(f"at weights {_named(family, weights)}: {err}") from None
    ws[kernels.WS_FLOOR] = -np.inf  # h >= -inf always: heuristic_value returns the raw h
    scale = heuristic.scale()
    heuristic_value = compiled_kernels(numba.typeof(ws), numba.typeof(terms)).heuristic_value

    def evaluate(ranks) -> tuple[float, float]:
        board = np.uint64(ranks_to_board(ranks))
        return float(heuristic_value(board, ws, terms)), scale

    return evaluate


def _compare(family: Family, weights: np.ndarray, evaluate, ranks) -> None:
    got, scale = evaluate(ranks)
    with family_code(family, "reference()"):
        expected = family.reference(ranks, weights)
    if isinstance(expected, bool) or not isinstance(expected, (int, float, np.integer,
                                                                np.floating)):
        raise FamilyCheckError(f"reference() returned {type(expected).__name__} {echo(expected)}, "
                               "expected a number")
    expected = float(expected)
    if not math.isfinite(got) or not math.isclose(
        got, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE * scale
    ):
        raise FamilyCheckError(
            f"compiled value {got!r} != reference {expected!r} at weights "
            f"{_named(family, weights)} on board {format_board_text(ranks_to_board(ranks))}"
        )


def _game_positions(family: Family) -> list[list[list[int]]]:
    """Every position of a few depth-0 games played with the defaults."""
    solver = Solver(family, depth=0)
    positions: list[int] = []
    for seed in range(GAMES):
        solver.play(seed, on_move=lambda board, _move, _score: positions.append(board))
    return [board_to_ranks(board) for board in positions]


def _check_live_over_dead(family, weight_sets, random_boards, positions) -> str:
    live = [b for b in map(ranks_to_board, random_boards + positions) if not is_game_over(b)]
    for weights in weight_sets:
        solver = Solver(family, family.named(weights), depth=1)
        for board in live:
            value = solver.evaluate(board)
            if not value > 0.0:
                raise FamilyCheckError(
                    f"a live board scores {value!r} (a dead board scores 0) at weights "
                    f"{_named(family, weights)}: board {format_board_text(board)}")
        for ranks in positions[:: max(len(positions) // 50, 1)]:
            board = ranks_to_board(ranks)
            values = solver.move_values(board)
            for move, value in values.items():
                # a move after which every spawn loses is worth 0, as a dead board
                if value is not None and not (math.isfinite(value) and (
                        value > 0 or value == 0 and _loses_at_once(board, move))):
                    shown = [v for v in values.values() if v is not None]
                    raise FamilyCheckError(
                        f"a depth-1 search gives {shown} ({move} {value!r}) at weights "
                        f"{_named(family, weights)} on board {format_board_text(board)}")
    return (f"search: {len(live):,} live boards score above a dead one (0) and depth-1 searches "
            f"give finite values, at every weight vector")


def _loses_at_once(board: int, move: Move) -> bool:
    """Whether every spawn after ``move`` leaves a board with no legal move."""
    moved, _ = apply_move(board, move)
    empty = [i for i in range(16) if not (moved >> (4 * i)) & 0xF]
    return all(is_game_over(moved | (rank << (4 * i))) for i in empty for rank in (1, 2))


def _random_ranks(rng, density: float) -> list[list[int]]:
    ranks = rng.integers(1, 16, size=(4, 4))
    ranks[rng.random((4, 4)) >= density] = 0
    return ranks.tolist()


def _named(family: Family, weights: np.ndarray) -> str:
    pairs = (f"{name}: {float(value):.6g}" for name, value in zip(family.param_names, weights))
    return "{" + ", ".join(pairs) + "}"
