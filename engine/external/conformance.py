"""``tune engine check``: whether an external engine does what tuning relies on, one check at a
time, each saying what it saw (docs/engine-protocol.md, "Checking an engine").

The games are traced: every move and spawn comes back, and the rules are replayed here on
tune2048's own engine (``engine.rules``), so a rule an engine breaks is found at its first
offending move. The spawn checks are statistical: each fails a correct engine with probability
at most ``ALPHA``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from engine.board import max_tile, tile_rank
from engine.external.process import EngineFailure, EngineProcess
from engine.external.protocol import Declaration, GameResult, Param, Search, Spawn
from engine.rules import Move, apply_move, is_game_over

ALPHA = 0.0005  # each statistical check's false alarm rate
MIN_SPAWNS = 1000  # fewer cannot show a wrong spawn distribution
PARAM_GAMES = 8  # of the check's seeds, played again with each parameter moved
LARGEST_SEED = 2**64 - 1  # a seed the protocol allows; tuning validates on seeds from 2**63
P_FOUR = 0.1
SPAWN_BINS = 20  # of the spawn cells' chi-squared test


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


def default_search(declaration: Declaration) -> Search:
    """The cheapest setting the engine declares: its smallest depth, else its own rule, else a
    small node budget."""
    if declaration.depths is not None:
        return Search("depth", declaration.depths[0])
    return Search("auto") if declaration.auto else Search("nodes", 1000)


def check_engine(command: list[str], *, games: int = 20, seed: int = 1,
                 search: Search | None = None, timeout: float = 60.0,
                 cwd: Path | None = None) -> Iterator[Check]:
    """The checks, each as it ends; a failure that leaves nothing to check ends them."""
    seeds = list(range(seed, seed + games))
    try:
        engine = EngineProcess(command, cwd, game_timeout=timeout)
    except EngineFailure as err:
        yield Check("handshake", False, str(err))
        return
    with engine:
        declared = engine.declaration
        yield Check("handshake", True, f"{declared.name}: protocol {declared.version}, "
                    f"{len(declared.params)} parameters, searches {declared.searches()}")
        search = search or default_search(declared)
        try:
            traced = list(engine.play(search, seeds, trace=True))
        except EngineFailure as err:
            yield Check("games", False, str(err))
            return
        results = [game for game, _ in traced]
        try:
            list(engine.play(search, [LARGEST_SEED]))
        except EngineFailure as err:
            yield Check("games", False, f"seed {LARGEST_SEED} (2^64 - 1; validation games have "
                                        f"seeds from 2^63 up): {err}")
            return
        yield Check("games", True, f"{games} games at {search}, seeds {seeds[0]} to "
                    f"{seeds[-1]}: scores {min(g.score for g in results):,} to "
                    f"{max(g.score for g in results):,}, {sum(g.moves for g in results):,} moves; "
                    "seed 2^64 - 1 plays too")
        replayed = [(game, *replay(steps, game)) for game, steps in traced]
        rules = _rules(replayed)
        yield rules
        if rules.passed:  # else the games stop at the fault: their spawns would say little
            yield from _spawns([spawn for _, _, spawns in replayed for spawn in spawns])
        yield _same("deterministic", "the same games again in this process", results,
                    lambda: engine.play(search, seeds))
        yield _same("deterministic across processes", "the same games in a second process",
                    results, lambda: _in_another(command, cwd, timeout, search, seeds))
        yield _parameters(engine, declared.params, search, seeds[:PARAM_GAMES],
                          results[:PARAM_GAMES])


def replay(steps: list, game: GameResult) -> tuple[str | None, list[tuple[int, int, int]]]:
    """A transcript replayed by the rules: its first fault (None when it has none), and its
    spawns as (empty cells, the chosen one's place among them in row-major order, tile)."""
    board, score, moves, due, spawns = 0, 0, 0, 2, []
    for step in steps:
        if isinstance(step, Spawn):
            empty = [cell for cell, rank in enumerate(ranks(board)) if not rank]
            if not due:
                return f"after move {moves}: a spawn where a move was due", spawns
            if step.cell not in empty:
                return (f"after move {moves}: a spawn on cell {step.cell}, which holds a tile "
                        f"(board {ranks_text(board)})"), spawns
            spawns.append((len(empty), empty.index(step.cell), step.tile))
            board |= tile_rank(step.tile) << (4 * step.cell)
            due -= 1
            continue
        if due:
            return f"move {moves + 1}: a move where a spawn was due", spawns
        moved, points = apply_move(board, Move[step.direction.upper()])
        if moved == board:
            return (f"move {moves + 1} ({step.direction}): illegal, it changes nothing on "
                    f"{ranks_text(board)}"), spawns
        if step.board is not None and step.board != ranks(moved):
            return (f"move {moves + 1} ({step.direction}) on {ranks_text(board)}: the engine's "
                    f"board is {hex_text(step.board)}, the rules give "
                    f"{ranks_text(moved)}"), spawns
        board, score, moves, due = moved, score + points, moves + 1, 1
    if due:
        return f"after move {moves}: the game ends before its spawn", spawns
    if not is_game_over(board):
        return f"after move {moves}: the game ends with a legal move left", spawns
    if (game.score, game.moves, game.tile) != (score, moves, max_tile(board)):
        return (f"its result says score {game.score:,}, {game.moves:,} moves, tile {game.tile}; "
                f"its moves give {score:,}, {moves:,} and {max_tile(board)}"), spawns
    return None, spawns


def ranks(board: int) -> tuple[int, ...]:
    return tuple((board >> 4 * cell) & 0xF for cell in range(16))


def hex_text(cell_ranks: tuple[int, ...]) -> str:
    """Ranks as a transcript's ``board=`` writes them: a hexadecimal digit a cell."""
    return "".join(f"{rank:x}" for rank in cell_ranks)


def ranks_text(board: int) -> str:
    return hex_text(ranks(board))


def _rules(replayed) -> Check:
    """The first fault of the games (game, fault, spawns) ``replay`` gave, if any."""
    for game, fault, _ in replayed:
        if fault is not None:
            return Check("rules", False, f"game with seed {game.seed}: {fault}")
    moves = sum(game.moves for game, _, _ in replayed)
    return Check("rules", True, f"{moves:,} moves and their spawns replayed: every move legal, "
                 "every board, score and game end as the rules give")


def _spawns(spawns: list[tuple[int, int, int]]) -> Iterator[Check]:
    if len(spawns) < MIN_SPAWNS:
        detail = (f"{len(spawns):,} spawns, fewer than the {MIN_SPAWNS:,} that can judge them: "
                  "check again with more --games")
        yield Check("spawn tiles", False, detail)
        yield Check("spawn cells", False, detail)
        return
    fours = sum(tile == 4 for _, _, tile in spawns)
    z = (fours - P_FOUR * len(spawns)) / math.sqrt(P_FOUR * (1 - P_FOUR) * len(spawns))
    p = math.erfc(abs(z) / math.sqrt(2))
    yield Check("spawn tiles", p >= ALPHA, f"{fours / len(spawns):.1%} 4s in {len(spawns):,} "
                f"spawns (p = {p:.2g} for 10%)")
    # Pooled, not tabled by the number of empty cells: how often a game comes back to a number
    # of empty cells depends on where its spawns fell (a spawn that ends a game is the last at
    # its count), which makes such tables of a correct engine look far from uniform. Each
    # spawn's place plus a seeded uniform, over the empty cells, is uniform on [0, 1) whatever
    # came before it.
    jitter = random.Random(0)
    bins = [0] * SPAWN_BINS
    for empty, place, _ in spawns:
        bins[int((place + jitter.random()) / empty * SPAWN_BINS)] += 1
    expected = len(spawns) / SPAWN_BINS
    chi2 = sum((count - expected) ** 2 / expected for count in bins)
    p = _chi2_upper_tail(chi2, SPAWN_BINS - 1)
    yield Check("spawn cells", p >= ALPHA, f"the place among the empty cells: chi-squared "
                f"{chi2:.1f} on {SPAWN_BINS - 1} degrees of freedom (p = {p:.2g} for uniform)")


def _chi2_upper_tail(chi2: float, df: int) -> float:
    """P(X >= chi2) for X chi-squared with ``df`` degrees of freedom (Wilson-Hilferty's normal
    approximation: within 10% down to the 0.0005 tail this check uses, at 19 degrees of
    freedom)."""
    z = ((chi2 / df) ** (1 / 3) - (1 - 2 / (9 * df))) / math.sqrt(2 / (9 * df))
    return 0.5 * math.erfc(z / math.sqrt(2))


def _key(game: GameResult) -> tuple[int, int, int, int]:
    return game.seed, game.score, game.tile, game.moves


def _same(name: str, what: str, first: list[GameResult], again) -> Check:
    try:
        second = [game for game, _ in again()]
    except EngineFailure as err:
        return Check(name, False, str(err))
    for a, b in zip(first, second, strict=True):
        if _key(a) != _key(b):
            return Check(name, False, f"seed {a.seed}: score {a.score:,}, {a.moves:,} moves "
                         f"the first time, {b.score:,} and {b.moves:,} the second")
    return Check(name, True, f"{what}: {len(first)} identical")


def _in_another(command, cwd, timeout, search, seeds):
    with EngineProcess(command, cwd, game_timeout=timeout) as other:
        return list(other.play(search, seeds))


def _moved_values(param: Param) -> tuple[float, float]:
    if param.low is not None and param.low != param.high:
        return param.low, param.high
    if param.default:
        return param.default / 4, param.default * 4
    return -1.0, 1.0


def _parameters(engine: EngineProcess, params, search, seeds, games) -> Check:
    """Each parameter at two values away from its default changes at least one game."""
    if not params:
        return Check("parameters", True, "it declares none")
    idle = []
    try:
        for param in params:
            low, high = _moved_values(param)
            changed = False
            for value in (low, high):
                engine.set_values({param.name: value})
                changed = changed or [_key(g) for g, _ in engine.play(search, seeds)] != [
                    _key(g) for g in games]
            engine.set_values({param.name: param.default})
            if not changed:
                idle.append(f"{param.name} (at {low:g} and {high:g})")
    except EngineFailure as err:
        return Check("parameters", False, str(err))
    if idle:
        return Check("parameters", False, f"changing none of {len(seeds)} games: "
                     f"{', '.join(idle)}")
    return Check("parameters", True, f"each of the {len(params)} changes play "
                 f"({len(seeds)} games at two values away from its default)")
