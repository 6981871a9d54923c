"""The games of a comparison kept in a file (``tune compare --save FILE``), so that one too long
for a sitting (hundreds of depth-4 games) goes on where it stopped.

The file is JSON: ``{"format": "tune2048-compare-games", "version": 2, "tune2048": VERSION,
"rules": RULES, "players": [...], "games": [[game, ...], ...]}``: the tune2048 that last wrote it
(for people: never checked), the rules its games were played by (``engine.rules.RULES``), then each player
as what decides its games (family, weights, depth policy, cutoff; or an external engine's name,
values and search), in the order they were first named, and its games, each a ``GameResult`` as
a mapping, keyed by its seed. A game is a pure function of its rules, its player and its seed,
so the games a file holds count for any later comparison by the same rules that names the same
player (matched by what decides its games, not by file name or place), whatever its ``--games``
and ``--seed`` and whichever tune2048 wrote them: a new weights file can be judged against games
already played by the others. Players the file holds that a comparison does not name are kept as
they are. Version 1, written by tune2048 0.3, names no rules: its games were played by the rules
of every tune2048 before 0.4.0 (``RULES_OF_VERSION_1``), and it is written as version 2 once
games are added.

The file is rewritten atomically as units of games come back, at most every 30 seconds
(``tuner.periodic``), and on ``flush``; a file of games by other rules, of a version this
tune2048 does not read, or of anything else is refused before a game is played, and never
written. A file git tracks is read, and never written (``engine.atomic``): a comparison that
would add games to it is refused before they are played.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path

from engine.atomic import atomic_write, check_kind
from engine.depth import to_yaml
from engine.echo import echo
from engine.errors import BadInput
from engine.external.player import EnginePlayer
from engine.rules import RULES
from engine.solver import GameResult, PlayerSpec
from tuner import installed
from tuner.periodic import PeriodicWrite

MARKER = "tune2048-compare-games"
VERSION = 2  # what this tune2048 writes; it reads 1 as well
RULES_OF_VERSION_1 = ("2048 4x4, 32768 ceiling, spawns 2:0.9 4:0.1 from SplitMix64 "
                      "(tune2048 rules 1)")  # fixed: engine.rules.RULES may change, this may not
GAME_FIELDS = {field.name for field in fields(GameResult)}
PLAYER_KEYS = {"family", "weights", "depth", "cutoff"}  # what ``player`` writes
ENGINE_PLAYER_KEYS = {"engine", "weights", "depth"}
MAX_TILES = {0, *(1 << rank for rank in range(1, 16))}
MAX_COUNT = 2**63 - 1  # a machine integer: no count of a game goes beyond it


def player(spec: PlayerSpec | EnginePlayer) -> dict:
    """What decides a player's games, as the file records it: an external engine's by the name
    it declares, its values and its search (not by the command that started it)."""
    if isinstance(spec, EnginePlayer):
        return {"engine": spec.name, "weights": dict(spec.weights),
                "depth": to_yaml(spec.depth)}
    return spec.to_dict()


class SavedGames:
    """The games of ``specs`` kept in ``path``: those it holds already, and each new unit's
    written there as it arrives (``tuner.periodic``: at most every 30 seconds; ``flush`` writes
    the rest)."""

    def __init__(self, path: str | Path, specs: Sequence[PlayerSpec]):
        self.path = Path(path)
        self.players: list[dict] = []  # every player the file holds, then those new to it
        self.games: list[dict[int, GameResult]] = []
        self._writes = PeriodicWrite(self._write)
        check_kind(self.path)  # a committed file may be read; atomic_write refuses to change it
        if self.path.exists():
            self._read()
        self._slots = [self._slot(player(spec)) for spec in specs]

    def _slot(self, wanted: dict) -> int:
        """Where ``wanted``'s games are held, made for a player new to the file."""
        if wanted not in self.players:
            self.players.append(wanted)
            self.games.append({})
        return self.players.index(wanted)

    def _read(self) -> None:
        try:
            held = json.loads(self.path.read_text(encoding="utf-8"))
            marker = held.get("format") if isinstance(held, dict) else None
        except (OSError, UnicodeDecodeError, ValueError) as err:
            raise BadInput(f"{self.path}: not a file of tune compare's games ({err})") from None
        if marker != MARKER:
            raise BadInput(f"{self.path}: not a file of tune compare's games (no \"format: "
                           f"{MARKER}\"); name another --save file")
        version = held.get("version")
        if version not in (1, VERSION) or isinstance(version, bool):
            raise BadInput(f"{self.path}: games file version {version!r}, written by tune2048 "
                           f"{held.get('tune2048')}; this tune2048 reads versions 1 and "
                           f"{VERSION}: name another --save file")
        rules = held.get("rules") if version == VERSION else RULES_OF_VERSION_1
        if rules != RULES:
            raise BadInput(f"{self.path}: holds games played by other rules ({rules!r}; this "
                           f"tune2048 plays {RULES!r}): name another --save file")
        players = held.get("players")
        if (problem := players_problem(players)) is not None:
            raise BadInput(f"{self.path}: its players are not as tune compare writes them: "
                           f"players{problem}")
        games = held.get("games")
        if (problem := _games_problem(games, len(players))) is not None:
            raise BadInput(f"{self.path}: its games are not as tune compare writes them: "
                           f"games{problem}")
        self.players = players
        self.games = [{game["seed"]: GameResult(**game) for game in kept} for kept in games]

    def missing(self, player_index: int, seeds: Sequence[int]) -> tuple[int, ...]:
        """Those of ``seeds`` that the comparison's player ``player_index`` has not played yet."""
        held = self.games[self._slots[player_index]]
        return tuple(seed for seed in seeds if seed not in held)

    def add(self, player_index: int, results: Sequence[GameResult]) -> None:
        """Keep these games of the comparison's player ``player_index``; write the file if it is
        due."""
        self.games[self._slots[player_index]].update((game.seed, game) for game in results)
        self._writes.changed()

    def flush(self) -> None:
        """Write every game kept since the file was last written (none: nothing is written)."""
        self._writes.flush()

    def _write(self) -> None:
        document = {
            "format": MARKER, "version": VERSION, "tune2048": installed.version(),
            "rules": RULES, "players": self.players,
            "games": [[games[seed].to_dict() for seed in sorted(games)] for games in self.games],
        }
        atomic_write(self.path, json.dumps(document, indent=1) + "\n")

    def results(self, player_index: int, seeds: Sequence[int]) -> list[GameResult]:
        """The player's games on ``seeds``, in their order (every one must have been played)."""
        held = self.games[self._slots[player_index]]
        return [held[seed] for seed in seeds]

    def count(self, seeds: Sequence[int]) -> int:
        """How many of the comparison's games (every player on ``seeds``) are kept."""
        return sum(seed in self.games[slot] for slot in self._slots for seed in seeds)


def players_problem(players: object) -> str | None:
    """What is wrong with a file's players (``: expected ...`` after their key); None where
    each is a player as ``player`` makes it."""
    if not isinstance(players, list):
        return f": expected a list of players, got {echo(players)}"
    for i, held in enumerate(players):
        if not isinstance(held, dict) or held.keys() not in (PLAYER_KEYS, ENGINE_PLAYER_KEYS):
            return (f"[{i}]: expected a mapping of {', '.join(sorted(PLAYER_KEYS))} (or engine "
                    f"for family, without cutoff), got {echo(held)}")
        name = "engine" if "engine" in held else "family"
        if not isinstance(held[name], str):
            return f"[{i}].{name}: expected text, got {echo(held[name])}"
        weights = held["weights"]
        if not isinstance(weights, dict) or not all(
                isinstance(key, str) and _is_finite(value) for key, value in weights.items()):
            return f"[{i}].weights: expected finite numbers by name, got {echo(weights)}"
        if isinstance(held["depth"], bool) or not isinstance(held["depth"], int | str):
            return f"[{i}].depth: expected a depth, got {echo(held['depth'])}"
        if "cutoff" in held and not (_is_finite(held["cutoff"]) and held["cutoff"] >= 0):
            return f"[{i}].cutoff: expected a finite number from 0, got {echo(held['cutoff'])}"
    return None


def _games_problem(games: object, players: int) -> str | None:
    """What is wrong with a file's games, a list of them for each of its ``players``; None
    where each is a ``GameResult`` as ``add`` writes it."""
    if not isinstance(games, list) or len(games) != players:
        return f": expected a list of games for each of its {players} players, got {echo(games)}"
    for i, kept in enumerate(games):
        if not isinstance(kept, list):
            return f"[{i}]: expected a list of games, got {echo(kept)}"
        for j, game in enumerate(kept):
            if (problem := game_problem(game)) is not None:
                return f"[{i}][{j}]{problem}"
    return None


def game_problem(game: object) -> str | None:
    """What is wrong with a game (``: expected ...``, or ``.KEY: expected ...``); None where it
    is a ``GameResult`` as a mapping."""
    if not isinstance(game, dict) or game.keys() != GAME_FIELDS:
        return f": expected a mapping of {', '.join(sorted(GAME_FIELDS))}, got {echo(game)}"
    for key, value in game.items():
        if (expected := _game_value_problem(key, value)) is not None:
            return f".{key}: expected {expected}, got {echo(value)}"
    return None


def _game_value_problem(key: str, value: object) -> str | None:
    """What a ``GameResult``'s field ``key`` is expected to be, where ``value`` is not it."""
    if key == "seconds":
        return None if _is_finite(value) and value >= 0 else "a finite number from 0"
    if isinstance(value, bool) or not isinstance(value, int):
        return "an integer"
    if key in ("seed", "final_board"):  # 64 bits: a seed, or a board's 16 cells of 4 bits
        return None if 0 <= value < 2**64 else "an integer from 0 to 2**64 - 1"
    if key == "max_tile":  # engine.solver: 1 << the largest rank, 0 on an empty board
        return None if value in MAX_TILES else "0 or a power of 2 from 2 to 32768"
    return None if 0 <= value <= MAX_COUNT else f"an integer from 0 to {MAX_COUNT}"


def _is_finite(value: object) -> bool:
    """Whether ``value`` is a finite number (a bool is none; an int beyond a float's range
    neither)."""
    return not isinstance(value, bool) and isinstance(value, int | float) and (
        -sys.float_info.max <= value <= sys.float_info.max)  # NaN is in no range
