"""The position set file: positions, their labels, where they came from and what they cost.

A NumPy ``.npz`` archive (``numpy.load`` reads it with ``allow_pickle=False``: nothing in it is
code) of these arrays, one row per position or per game:

    header            uint8 [bytes]  UTF-8 JSON: the fields below
    board             uint64 [n]     the position (engine.board's layout)
    game              int64 [n]      its game: an index into the per-game arrays
    move              int64 [n]      moves played in that game before it
    score_before      int64 [n]      the game's score then
    values            float64 [n, 4] the oracle's value of up, down, left, right (NaN: illegal)
    seeds             uint64 [g]     each game's seed, in the order the set holds them
    game_score        int64 [g]      its final score
    game_max_tile     int64 [g]      its largest tile
    game_moves        int64 [g]      its length in moves
    player_positions  int64 [g]      positions the player's searches evaluated in the game
    oracle_positions  int64 [g]      positions the oracle's searches evaluated labelling it
    player_cpu        float64 [g]    CPU seconds of the game
    oracle_cpu        float64 [g]    CPU seconds of its labels

The last four are the set's building cost, game by game (``PositionSet.cost`` sums them). The
header: ``format: tune2048-positions``, ``version`` (1), ``rules`` (``engine.rules.RULES``: a set
holds facts of one ruleset), ``tune2048`` (the version that built it), ``sampler`` (the player,
the oracle and ``every``, ``PositionSampler.to_dict``), ``seed`` (the set's seed, from which its
game seeds derive), ``planned`` (the games it was asked for: it is complete when it holds them
all) and ``sha256``, a digest of every array and the rest of the header, so that a damaged or
edited file is refused rather than read. Positions are in the order of their games, and a
game's in the order played.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from engine.atomic import atomic_write
from engine.errors import BadInput
from engine.positions.sampling import LabelledGame
from engine.rules import RULES

FORMAT_MARKER = "tune2048-positions"
FORMAT_VERSION = 1
POSITION_ARRAYS = {"board": np.uint64, "game": np.int64, "move": np.int64,
                   "score_before": np.int64, "values": np.float64}
# each per-game array and the LabelledGame field it holds
GAME_ARRAYS = {"seeds": (np.uint64, "seed"), "game_score": (np.int64, "score"),
               "game_max_tile": (np.int64, "max_tile"), "game_moves": (np.int64, "moves"),
               "player_positions": (np.int64, "player_positions"),
               "oracle_positions": (np.int64, "oracle_positions"),
               "player_cpu": (np.float64, "player_cpu"), "oracle_cpu": (np.float64, "oracle_cpu")}
HEADER_KEYS = ("format", "version", "rules", "tune2048", "sampler", "seed", "planned")


class PositionSetError(BadInput):
    """A position set file is unreadable, damaged or of another kind; the message names it."""


@dataclass(repr=False)
class PositionSet:
    """Labelled positions and their provenance (the module docstring says what each holds)."""

    sampler: dict
    seed: int
    planned: int
    tune2048: str
    arrays: dict[str, np.ndarray]

    def __repr__(self) -> str:  # the arrays' sizes, not their contents
        return (f"PositionSet({self.positions:,} positions of {self.games:,} of {self.planned:,} "
                f"games, seed {self.seed})")

    @classmethod
    def from_games(cls, sampler: dict, seed: int, planned: int, tune2048: str,
                   games: Sequence[LabelledGame]) -> PositionSet:
        """The set of ``games``, in the order given."""
        arrays = {name: np.array([getattr(game, attribute) for game in games], dtype)
                  for name, (dtype, attribute) in GAME_ARRAYS.items()}
        for name, dtype in POSITION_ARRAYS.items():
            if name != "game":
                arrays[name] = np.concatenate(
                    [np.zeros((0, 4) if name == "values" else 0, dtype)]
                    + [getattr(game, name) for game in games]).astype(dtype)
        arrays["game"] = np.repeat(np.arange(len(games), dtype=np.int64),
                                   [len(game.board) for game in games])
        return cls(sampler, seed, planned, tune2048, arrays)

    def labelled_games(self) -> list[LabelledGame]:
        """The set's games, as ``from_games`` takes them (``seconds``: their CPU seconds)."""
        bounds = np.searchsorted(self.arrays["game"], np.arange(self.games + 1))
        games = []
        for index in range(self.games):
            rows = slice(bounds[index], bounds[index + 1])
            each = {attribute: self.arrays[name][index].item()
                    for name, (_dtype, attribute) in GAME_ARRAYS.items()}
            games.append(LabelledGame(
                **each, seconds=each["player_cpu"] + each["oracle_cpu"],
                **{name: self.arrays[name][rows]
                   for name in ("board", "move", "score_before", "values")}))
        return games

    @property
    def positions(self) -> int:
        return len(self.arrays["board"])

    @property
    def games(self) -> int:
        return len(self.arrays["seeds"])

    @property
    def complete(self) -> bool:
        return self.games == self.planned

    @property
    def score_to_come(self) -> np.ndarray:
        """Per position, the points its game scored after it."""
        return self.arrays["game_score"][self.arrays["game"]] - self.arrays["score_before"]

    @property
    def final_max_tile(self) -> np.ndarray:
        """Per position, the largest tile its game reached."""
        return self.arrays["game_max_tile"][self.arrays["game"]]

    @property
    def cost(self) -> dict[str, float]:
        """What building the set cost in all: its games, the positions taken, the positions
        the player's and the oracle's searches evaluated, and their CPU seconds."""
        return {"games": self.games, "positions": self.positions,
                **{name: self.arrays[name].sum().item() for name in
                   ("player_positions", "oracle_positions", "player_cpu", "oracle_cpu")}}

    @property
    def sha256(self) -> str:
        """The digest the file carries: of every array and the rest of the header."""
        return _digest(self.header(), self.arrays)

    def header(self) -> dict:
        return {"format": FORMAT_MARKER, "version": FORMAT_VERSION, "rules": RULES,
                "tune2048": self.tune2048, "sampler": self.sampler, "seed": self.seed,
                "planned": self.planned}


def write_positions(path: str | os.PathLike, positions: PositionSet) -> None:
    """Write a position set atomically (``engine.atomic``)."""
    header = positions.header()
    header["sha256"] = positions.sha256
    text = json.dumps(header, sort_keys=True).encode("utf-8")
    buffer = io.BytesIO()
    np.savez_compressed(buffer, header=np.frombuffer(text, np.uint8), **positions.arrays)
    atomic_write(path, buffer.getvalue())


def read_positions(path: str | os.PathLike) -> PositionSet:
    """Read and check a position set; ``PositionSetError`` (one line naming the file) where it
    is not one, is damaged, or holds another ruleset's or format version's positions."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = set(archive.files)
            expected = {"header", *POSITION_ARRAYS, *GAME_ARRAYS}
            if names != expected:
                raise PositionSetError(f"{path}: not a position set file (it holds "
                                       f"{sorted(names)}, not {sorted(expected)})")
            arrays = {name: archive[name] for name in expected}
    except PositionSetError:
        raise
    except FileNotFoundError:
        raise PositionSetError(f"{path}: no such position set file") from None
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as err:
        raise PositionSetError(f"{path}: not a position set file, or a damaged one ({err})") \
            from None
    header = _header(path, arrays.pop("header"))
    _check_arrays(path, arrays)
    if _digest({key: header[key] for key in HEADER_KEYS}, arrays) != header.get("sha256"):
        raise PositionSetError(f"{path}: damaged: its contents do not match the digest it was "
                               "written with")
    return PositionSet(header["sampler"], header["seed"], header["planned"], header["tune2048"],
                       arrays)


def _header(path, raw: np.ndarray) -> dict:
    try:
        header = json.loads(raw.tobytes().decode("utf-8")) if raw.dtype == np.uint8 else None
    except (UnicodeDecodeError, ValueError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT_MARKER:
        raise PositionSetError(f"{path}: not a position set file (no format: {FORMAT_MARKER} "
                               "in its header)")
    if header.get("version") != FORMAT_VERSION:
        raise PositionSetError(f"{path}: position set version {header.get('version')!r}; this "
                               f"tune2048 reads version {FORMAT_VERSION}")
    if header.get("rules") != RULES:
        raise PositionSetError(f"{path}: built for the rules {header.get('rules')!r}, not "
                               f"these ({RULES!r}): its positions and labels do not hold here")
    missing = [key for key in (*HEADER_KEYS, "sha256") if key not in header]
    if missing:
        raise PositionSetError(f"{path}: its header lacks {', '.join(missing)}: damaged")
    return header


def _check_arrays(path, arrays: dict[str, np.ndarray]) -> None:
    """Refuse arrays of the wrong type or shape: what a hand-made or truncated set would hold."""
    types = {**POSITION_ARRAYS, **{name: dtype for name, (dtype, _) in GAME_ARRAYS.items()}}
    for name, dtype in types.items():
        if arrays[name].dtype != dtype:
            raise PositionSetError(f"{path}: its {name} array is {arrays[name].dtype}, not "
                                   f"{np.dtype(dtype)}")
    positions, games = len(arrays["board"]), len(arrays["seeds"])
    if arrays["values"].shape != (positions, 4) or any(
            arrays[name].shape != (positions,) for name in POSITION_ARRAYS if name != "values"):
        raise PositionSetError(f"{path}: its per-position arrays differ in length")
    if any(arrays[name].shape != (games,) for name in GAME_ARRAYS):
        raise PositionSetError(f"{path}: its per-game arrays differ in length")
    game = arrays["game"]
    if positions and (game.min() < 0 or game.max() >= games or np.any(np.diff(game) < 0)):
        raise PositionSetError(f"{path}: its positions' games are not the games it holds, in "
                               "order")


def _digest(header: dict, arrays: dict[str, np.ndarray]) -> str:
    """sha256 over the header (without its digest) and every array's name, type, shape and
    bytes, in a fixed order."""
    digest = hashlib.sha256(json.dumps(header, sort_keys=True).encode("utf-8"))
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()
