"""An external engine as a player: what decides its games (``EnginePlayer``: the engine, its
parameter values, its search), and the one engine process each worker keeps for them.

A worker process starts its engine once and keeps it for every unit it plays (``play_games``):
values are sent only when they change, and the engine is started afresh after
``games_per_process`` games, or after it failed. A failure (the engine exited, hung past the
game timeout, broke the protocol, reported an error) costs the unit it happened in: it is
raised as ``EngineLost``, which the evaluators retry like a unit lost with its worker, and
which ends the run in one line once the retries are spent.
"""

from __future__ import annotations

import hashlib
import importlib.util
import shlex
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from engine.depth import ByBoard, DepthPolicy, NodeBudget, to_yaml
from engine.errors import BadInput
from engine.external.process import EngineFailure, EngineProcess
from engine.external.protocol import Declaration, Search

DEFAULT_GAME_TIMEOUT = 60.0  # seconds: far beyond a depth-3 game of a compiled engine

if TYPE_CHECKING:
    from engine.solver import GameResult
    from engine.weights_file import WeightsFile


class EngineLost(Exception):
    """An engine failed while it played a unit: the unit is played again (a retry), and the
    run stops with this one line when the retries are spent."""


@dataclass(frozen=True)
class EngineCommand:
    """How an engine is started: its command line, run in ``cwd`` (absolute), and how long a
    game may take and how many games one process plays before it is started afresh (0: as
    many as it is asked)."""

    command: tuple[str, ...]
    cwd: str
    game_timeout: float = DEFAULT_GAME_TIMEOUT
    games_per_process: int = 0
    package: str = ""  # where its files were shipped to: the package they came in, its cwd there

    @property
    def label(self) -> str:
        return shlex.join(self.command)

    def directory(self) -> Path:
        """Where the engine runs here: ``cwd``, or where its shipped files are."""
        if not self.package:
            return Path(self.cwd)
        found = importlib.util.find_spec(self.package)
        if found is None or not found.submodule_search_locations:
            raise BadInput(f"engine {self.label!r}: its shipped files ({self.package}) are not "
                           "on this node")
        return Path(found.submodule_search_locations[0])

    def start(self) -> EngineProcess:
        return EngineProcess(list(self.command), self.directory(), game_timeout=self.game_timeout)


@cache
def declaration(engine: EngineCommand) -> Declaration:
    """What ``engine`` declares, asked once a process (``EngineFailure``, ``BadInput``)."""
    with engine.start() as process:
        return process.declaration


def search_for(depth: DepthPolicy, declared: Declaration | None = None) -> Search:
    """The protocol's search for one of our depth policies: a fixed depth is ``depth:N``, a node
    budget ``nodes:N``, and ``auto`` the engine's own adaptive rule, whose settings are the
    engine's (``auto:cap=5`` is refused: ``BadInput``). With ``declared``, a search the engine
    does not declare is refused too."""
    if isinstance(depth, int):
        search = Search("depth", depth)
    elif isinstance(depth, NodeBudget):
        search = Search("nodes", depth.nodes)
    elif isinstance(depth, ByBoard) and depth == ByBoard():
        search = Search("auto")
    else:
        raise BadInput(f"{to_yaml(depth)}: an engine's auto is its own rule, with its own "
                       "settings: write auto")
    if declared is not None and not declared.supports(search):
        raise BadInput(f"engine {declared.name!r} does not search at {search} (it declares "
                       f"{declared.searches() or 'no search'})")
    return search


@dataclass(frozen=True)
class EnginePlayer:
    """Everything that decides an external engine's games: a game is a function of this and a
    seed, in that engine. ``name`` is the name the engine declares, which a weights file
    records; the values are sent as they are (an ``int`` parameter's rounded by the engine
    process)."""

    engine: EngineCommand
    name: str
    weights: dict[str, float]
    depth: DepthPolicy

    def __hash__(self) -> int:
        return hash((self.engine, self.name, self.depth))

    @property
    def search(self) -> Search:
        return search_for(self.depth)

    def describe(self) -> str:
        return f"engine {self.name} at {self.search}"

    def solver(self) -> EngineSolver:
        return EngineSolver(self)


class EngineSolver:
    """Plays one game at a time with ``player``'s engine, for what asks a solver for games."""

    def __init__(self, player: EnginePlayer):
        self.player = player

    def play(self, seed: int) -> GameResult:
        return play_games(self.player, [seed])[0]


class _KeptEngine:
    """This process's engine: the process, the values it holds, the games it has played."""

    def __init__(self, engine: EngineCommand):
        self.engine = engine
        self.process = engine.start()
        self.values: dict[str, float] = {}
        self.games = 0

    def play(self, player: EnginePlayer, seeds: list[int]) -> list[GameResult]:
        changed = {name: value for name, value in player.weights.items()
                   if self.values.get(name) != value}
        self.process.set_values(changed)
        self.values.update(changed)
        if not seeds:
            return []
        from engine.solver import GameResult  # numba: loaded where games are played

        results = []
        started = time.perf_counter()
        for game, _steps in self.process.play(player.search, seeds):
            ended = time.perf_counter()  # the game's time as the scheduler sees it
            self.games += 1
            results.append(GameResult(
                seed=game.seed, score=game.score, max_tile=game.tile, moves=game.moves,
                seconds=ended - started, moves_evaluated=game.positions or 0, final_board=0))
            started = ended
        return results


_kept: _KeptEngine | None = None  # this process's engine, once it has played


def play_games(player: EnginePlayer, seeds: list[int]) -> list[GameResult]:
    """``seeds`` played by ``player``'s engine, kept in this process between calls.

    Raises:
        EngineLost: the engine failed; it is closed, and the next call starts it afresh.
        BadInput: the values or the search are not what the engine declares.
    """
    global _kept
    most = player.engine.games_per_process
    if _kept is not None and (_kept.engine != player.engine or most and _kept.games >= most):
        close_kept()
    try:
        if _kept is None:
            _kept = _KeptEngine(player.engine)
        return _kept.play(player, seeds)
    except EngineFailure as failure:
        close_kept()
        raise EngineLost(str(failure)) from None
    except BaseException:  # bad input, or Ctrl-C mid-answer: the engine is ended with it
        close_kept()
        raise


def close_kept() -> None:
    """End this process's engine, if it has one."""
    global _kept
    if _kept is not None:
        kept, _kept = _kept, None
        kept.process.close()


def engine_digest(engine: EngineCommand) -> str:
    """A digest of the engine's command line and of every file it names (its program, a
    script): a rebuilt or edited engine plays other games. A word that names no file (a
    program on PATH, an option) counts by its text alone."""
    digest = hashlib.sha256(engine.label.encode())
    for word in engine.command:
        path = Path(engine.cwd, word)
        try:
            if path.is_file():
                digest.update(path.read_bytes())
        except OSError:
            pass  # unreadable: its name is in the command line already
    return digest.hexdigest()


def engine_player(engine: EngineCommand, weights: WeightsFile | None, source: str,
                  depth: DepthPolicy | None = None) -> EnginePlayer:
    """The player of a weights file (``source`` names it) in ``engine``, or of the engine's
    declared defaults where there is none; at ``depth`` where given, else the file's (the
    defaults': ``depth:1``). ``BadInput`` in one line when the engine cannot start, the file
    holds a family's weights or another engine's, or a value or the search is not one the
    engine declares."""
    declared = declaration(engine)
    if weights is None:
        values = {param.name: param.default for param in declared.params}
        chosen = 1 if depth is None else depth
    elif weights.engine is None:
        raise BadInput(f"{source}: holds weights of family {weights.family}, not of an engine: "
                       "play it without --engine")
    elif weights.engine != declared.name:
        raise BadInput(f"{source}: engine: holds weights of engine {weights.engine!r}, but "
                       f"{engine.label!r} declares {declared.name!r}")
    else:
        names = [param.name for param in declared.params]
        for name in weights.weights:
            if name not in names:
                raise BadInput(f"{source}: weights.{name}: not a parameter of engine "
                               f"{declared.name!r} ({', '.join(names)})")
        for name in names:
            if name not in weights.weights:
                raise BadInput(f"{source}: weights.{name}: missing parameter of engine "
                               f"{declared.name!r}")
        values = {name: weights.weights[name] for name in names}
        chosen = weights.depth if depth is None else depth
    try:
        search_for(chosen, declared)
    except BadInput as err:
        raise BadInput(f"{source if depth is None else '--depth'}: {err}") from None
    return EnginePlayer(engine, declared.name, values, chosen)
