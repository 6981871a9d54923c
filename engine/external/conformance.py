"""``tune engine check``: whether an external engine does what tuning relies on, one check at a
time, each saying what it saw (docs/engine-protocol.md, "Checking an engine").

The games are traced: every move and spawn comes back, and the rules are replayed here on
tune2048's own engine (``engine.rules``), so a rule an engine breaks is found at its first
offending move. The spawn checks are statistical: each fails a correct engine with probability
at most ``ALPHA``. What the check plays grows with the parameters and the searches it is given,
so its price comes first, from a game timed at each search.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.board import max_tile, tile_rank
from engine.errors import BadInput
from engine.external.process import EngineFailure, EngineProcess
from engine.external.protocol import Declaration, GameResult, Param, Search, Spawn
from engine.rules import Move, apply_move, is_game_over
from engine.stats import counted, duration

ALPHA = 0.0005  # each statistical check's false alarm rate
MIN_SPAWNS = 1000  # fewer cannot show a wrong spawn distribution
PARAM_GAMES = 8  # of the check's seeds, played again with each parameter moved
LARGEST_SEED = 2**64 - 1  # a seed the protocol allows; tuning validates on seeds from 2**63
NODES = 1000  # the budget the check plays at where an engine searches within one
P_FOUR = 0.1
SPAWN_BINS = 20  # of the spawn cells' chi-squared test
PER_GAME_STATE = ("a game must depend only on its seed, the values and the search: clear "
                  "caches and carried state before each game")


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class Price:
    """What the check will play and about how long it takes, said before its games."""

    games: int
    seconds: float
    detail: str


@dataclass(frozen=True)
class Plan:
    """Where the check plays: ``main``, the games, their replay and each parameter that does
    not say where it acts; per-game state at every one of ``searches`` (``main`` first)."""

    main: Search
    searches: tuple[Search, ...]
    params: tuple[Param, ...]  # those checked
    declared: int  # parameters the engine declares
    games: int

    @property
    def param_games(self) -> int:
        return min(PARAM_GAMES, self.games)

    def acting(self, param: Param) -> Search:
        return param.acts or self.main

    def steps(self) -> dict[str, list[tuple[Search, int]]]:
        """The games each step plays after the handshake, as (search, games) pairs."""
        acting = dict.fromkeys(self.acting(param) for param in self.params)
        return {
            "timing": [(search, 1) for search in self.searches],
            "games": [(self.main, 2 * self.games + 1)],  # traced, seed 2^64 - 1, a 2nd process
            "parameters": [*((self.acting(param), 2 * self.param_games) for param in self.params),
                           *((search, self.param_games) for search in acting
                             if search != self.main)],  # at its defaults, to compare with
            "per-game state": [(self.main, self.games),
                               *((search, 2) for search in self.searches[1:])],
        }

    def price(self, seconds: dict[Search, float]) -> Price:
        """The price at ``seconds`` a game at each search (one game timed at each)."""
        steps = {name: (sum(count for _, count in pairs),
                        sum(count * seconds[search] for search, count in pairs))
                 for name, pairs in self.steps().items()}
        total = sum(games for games, _ in steps.values())
        left = sum(spent for name, (_, spent) in steps.items() if name != "timing")
        chosen = (f"{len(self.params)} of the {self.declared} parameters"
                  if len(self.params) < self.declared else counted(self.declared, "parameter"))
        fewer = "; --params NAME,... checks fewer" if len(self.params) == self.declared > 1 else ""
        timed = ", ".join(f"{search} {duration(seconds[search])}" for search in self.searches)
        return Price(total, left, (
            f"{total:,} games, about {duration(left)} more: {steps['games'][0]:,} at "
            f"{self.main} in two processes, {steps['parameters'][0]:,} for {chosen} "
            f"({2 * self.param_games} each{fewer}), {steps['per-game state'][0]:,} for "
            f"per-game state at {', '.join(map(str, self.searches))}; from one game timed at "
            f"each search ({timed}): games vary with their seeds, and other work slows them"))


def default_searches(declaration: Declaration) -> list[Search]:
    """Where the check plays unless told: the cheapest search the engine declares (its lowest
    depth, else its own rule, else a small node budget), then one of each other kind: the depth
    above its lowest (one more chance layer; each deeper one costs many times more), its own
    rule, a node budget."""
    low, high = declaration.depths or (0, -1)
    searches = [Search("depth", depth) for depth in range(low, min(low + 1, high) + 1)]
    searches += [Search("auto")] * declaration.auto + [Search("nodes", NODES)] * declaration.nodes
    return searches


def plan(declared: Declaration, label: str, games: int, searches: Sequence[Search] = (),
         params: Sequence[str] | None = None) -> Plan:
    """What the check plays: at ``searches`` (the first plays the games; default: the cheapest
    and one of each kind), the parameters named in ``params`` (default: all). A search the
    engine does not declare, or a name it does not, is ``BadInput``."""
    searches = list(searches) or default_searches(declared)
    for search in searches:
        if not declared.supports(search):
            raise BadInput(f"engine {label!r}: it does not search at {search} (it declares "
                           f"{declared.searches()})")
    names = {param.name: param for param in declared.params}
    unknown = [name for name in params or () if name not in names]
    if unknown:
        raise BadInput(f"--params: engine {label!r} declares no parameter named "
                       f"{', '.join(map(repr, unknown))} (it declares "
                       f"{', '.join(names) or 'none'})")
    chosen = declared.params if params is None else tuple(
        names[name] for name in dict.fromkeys(params))
    acting = [param.acts for param in chosen if param.acts is not None]
    return Plan(searches[0], tuple(dict.fromkeys([*searches, *acting])), chosen,
                len(declared.params), games)


def check_engine(command: list[str], *, games: int = 20, seed: int = 1,
                 searches: Sequence[Search] = (), params: Sequence[str] | None = None,
                 timeout: float = 60.0, cwd: Path | None = None) -> Iterator[Check | Price]:
    """The checks, each as it ends, and the price before the games; a failure that leaves
    nothing to check ends them. ``searches`` and ``params`` as ``plan`` takes them."""
    seeds = list(range(seed, seed + games))
    try:
        engine = EngineProcess(command, cwd, game_timeout=timeout)
    except EngineFailure as err:
        yield Check("handshake", False, str(err))
        return
    with engine:
        declared = engine.declaration
        planned = plan(declared, engine.label, games, searches, params)
        yield Check("handshake", True, f"{declared.name}: protocol {declared.version}, "
                    f"{len(declared.params)} parameters, searches {declared.searches()}")
        try:
            fresh = _timed(command, cwd, timeout, planned.searches, seed)
        except EngineFailure as err:
            where = ("; --search SEARCH,... chooses where the check plays"
                     if len(planned.searches) > 1 else "")
            yield Check("games", False, f"{err}{where}")
            return
        yield planned.price({search: spent for search, (_, spent) in fresh.items()})
        search = planned.main
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
        yield _same_elsewhere(results, lambda: _in_another(command, cwd, timeout, search, seeds))
        yield _parameters(engine, planned, seeds[:planned.param_games],
                          results[:planned.param_games])
        yield _per_game_state(engine, planned, seeds, results,
                              {search: game for search, (game, _) in fresh.items()})


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


def _timed(command, cwd, timeout, searches, seed) -> dict[Search, tuple[GameResult, float]]:
    """The game of ``seed`` at each search in a second process, and its wall time: the price's
    game times, and what per-game state compares this process's games with."""
    played = {}
    with EngineProcess(command, cwd, game_timeout=timeout) as other:
        for search in searches:
            start = time.monotonic()
            [(game, _)] = other.play(search, [seed])
            played[search] = game, time.monotonic() - start
    return played


def _same_elsewhere(first: list[GameResult], again) -> Check:
    name = "deterministic across processes"
    try:
        second = [game for game, _ in again()]
    except EngineFailure as err:
        return Check(name, False, str(err))
    for a, b in zip(first, second, strict=True):
        if _key(a) != _key(b):
            return Check(name, False, f"seed {a.seed}: score {a.score:,}, {a.moves:,} moves "
                         f"in this process, {b.score:,} and {b.moves:,} in a second")
    return Check(name, True, f"the same games in a second process: {len(first)} identical")


def _in_another(command, cwd, timeout, search, seeds):
    with EngineProcess(command, cwd, game_timeout=timeout) as other:
        return list(other.play(search, seeds))


def _moved_values(param: Param) -> tuple[float, float]:
    if param.low is not None and param.low != param.high:
        values = param.low, param.high
    elif param.default:
        values = param.default / 4, param.default * 4
    else:
        values = -1.0, 1.0
    if param.kind == "int":  # sent whole: the whole values nearest, never the default
        values = tuple(_whole(value, param.default) for value in values)
    return values


def _whole(value: float, default: float) -> float:
    whole = float(round(value))
    return whole if whole != default else default + math.copysign(1, value - default)


def _parameters(engine: EngineProcess, planned: Plan, seeds: list[int],
                games: list[GameResult]) -> Check:
    """Each parameter at two values away from its default changes at least one game, at the
    search it says it acts at, else the check's."""
    if not planned.params:
        return Check("parameters", True, "it declares none")
    played = {planned.main: [_key(game) for game in games]}
    idle, said = [], []
    try:
        for param in planned.params:
            search = planned.acting(param)
            if search not in played:  # at its defaults: what a moved value is compared with
                played[search] = [_key(game) for game, _ in engine.play(search, seeds)]
            low, high = _moved_values(param)
            changed = False
            for value in (low, high):
                engine.set_values({param.name: value})
                changed = changed or [_key(g) for g, _ in engine.play(search, seeds)] != (
                    played[search])
            engine.set_values({param.name: param.default})
            if not changed:
                idle.append(param)
                said.append(f"{param.name} (at {low:g} and {high:g}, {search})")
    except EngineFailure as err:
        return Check("parameters", False, str(err))
    if idle:
        hint = ("; a parameter that acts only at other searches says where in its declaration "
                "(acts=SEARCH)" if any(param.acts is None for param in idle) else "")
        return Check("parameters", False, f"changing none of {len(seeds)} games: "
                     f"{', '.join(said)}{hint}")
    some = (f"{len(planned.params)} checked (of {planned.declared})"
            if len(planned.params) < planned.declared else f"{planned.declared}")
    where = sorted({str(planned.acting(param)) for param in planned.params})
    return Check("parameters", True, f"each of the {some} changes play ({len(seeds)} games at "
                 f"two values away from its default, at {', '.join(where)})")


def _per_game_state(engine: EngineProcess, planned: Plan, seeds: list[int],
                    first: list[GameResult], fresh: dict[Search, GameResult]) -> Check:
    """The games again in this process, after every game and value before them: the check's
    games at its search; and at each other search the game a second process played there,
    played here once with every parameter checked moved, then again at the defaults (what a
    cache kept from the first would change)."""
    name = "per-game state"
    moved = {param.name: _moved_values(param)[0] for param in planned.params}
    defaults = {param.name: param.default for param in planned.params}
    try:
        for search in planned.searches[1:]:
            alone = fresh[search]
            engine.set_values(moved)
            list(engine.play(search, [alone.seed]))
            engine.set_values(defaults)
            [(after, _)] = engine.play(search, [alone.seed])
            if _key(after) != _key(alone):
                return Check(name, False, f"seed {alone.seed} at {search}: score "
                             f"{alone.score:,}, {alone.moves:,} moves in a second process, "
                             f"{after.score:,} and {after.moves:,} here, after it was played "
                             f"at other values: {PER_GAME_STATE}")
        again = [game for game, _ in engine.play(planned.main, seeds)]
    except EngineFailure as err:
        return Check(name, False, str(err))
    for game, later in zip(first, again, strict=True):
        if _key(game) != _key(later):
            return Check(name, False, f"seed {game.seed} at {planned.main}: score "
                         f"{game.score:,}, {game.moves:,} moves the first time, {later.score:,} "
                         f"and {later.moves:,} after other games and values: {PER_GAME_STATE}")
    elsewhere = [str(search) for search in planned.searches[1:]]
    return Check(name, True, f"the same games after other games, values and searches in this "
                 f"process: {len(first)} at {planned.main}" + (
                     f", one at each of {', '.join(elsewhere)}" if elsewhere else ""))
