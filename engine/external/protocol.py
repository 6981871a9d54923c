"""The engine protocol, version 1 (docs/engine-protocol.md): the lines tune2048 sends an external
engine and the lines it reads back, as data. Reading is strict: a line outside the grammar is a
``ProtocolError`` that quotes it, and nothing an engine writes is ever run or used as a path."""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

from engine.defaults import MOVE_NAMES
from engine.depth import DEEPEST, MAX_NODES, Limits

VERSION = 1
GREETING = f"tune2048 {VERSION}"
SEARCH_KINDS = ("depth", "auto", "nodes")
MAX_LINE = 4096  # characters: a longer line is malformed
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
MAX_SEEDS = 10_000  # a request's
MAX_SEARCH_DIGITS = 12  # of a search's N (depth:N, nodes:N)
# An engine's searches are its own to afford: a depth within the range it declares is asked
# for, wherever it is written (a config, --depth, a weights file), and ours (a fixed depth to 8,
# 5 in a tuning run: engine.depth) do not apply; the declaration is checked where it is known.
ENGINE_LIMITS = Limits(fixed=10**MAX_SEARCH_DIGITS - 1, cap=DEEPEST, nodes=MAX_NODES)


class ProtocolError(ValueError):
    """A line an engine wrote that does not follow the protocol."""


@dataclass(frozen=True)
class Param:
    """A parameter the engine accepts: ``kind`` 'int' or 'float', optional bounds, and
    optionally ``acts``, a search at which it changes play (one that acts only deeper, or
    under ``auto``, changes nothing at the cheapest search ``tune engine check`` plays)."""

    name: str
    kind: str
    default: float
    low: float | None = None
    high: float | None = None
    acts: Search | None = None


@dataclass(frozen=True)
class Search:
    """A search setting: ``depth:N``, ``auto`` (the engine's own rule) or ``nodes:N``."""

    kind: str
    value: int | None = None

    def __str__(self) -> str:
        return self.kind if self.value is None else f"{self.kind}:{self.value}"

    @classmethod
    def parse(cls, text: str) -> Search:
        kind, colon, value = text.partition(":")
        if kind == "auto" and not colon:
            return cls("auto")
        if (kind in ("depth", "nodes") and value.isascii() and value.isdigit()
                and len(value) <= MAX_SEARCH_DIGITS):
            return cls(kind, int(value))
        raise ValueError(f"a search is depth:N, auto or nodes:N, got {text!r}")


@dataclass(frozen=True)
class Declaration:
    """What an engine says of itself before its first request."""

    name: str
    version: int
    params: tuple[Param, ...]
    depths: tuple[int, int] | None  # the fixed depths it searches, when it does
    auto: bool
    nodes: bool

    def supports(self, search: Search) -> bool:
        if search.kind == "depth":
            return self.depths is not None and self.depths[0] <= search.value <= self.depths[1]
        return self.auto if search.kind == "auto" else self.nodes

    def searches(self) -> str:
        said = [f"depth:{self.depths[0]} to depth:{self.depths[1]}"] if self.depths else []
        return ", ".join(said + ["auto"] * self.auto + ["nodes:N"] * self.nodes)


@dataclass(frozen=True)
class GameResult:
    """A game's result line: its seed, score, largest tile, moves, and optionally the positions
    its search evaluated and the seconds it took."""

    seed: int
    score: int
    tile: int
    moves: int
    positions: int | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class Spawn:
    cell: int  # 0 to 15, row-major from the top left
    tile: int  # 2 or 4


@dataclass(frozen=True)
class Moved:
    direction: str
    board: tuple[int, ...] | None  # the ranks after the move, before its spawn, when given


def set_request(name: str, value: float) -> str:
    return f"set {name} {value!r}"


def play_requests(search: Search, seeds: list[int], trace: bool = False
                  ) -> list[tuple[str, list[int]]]:
    """The requests that play ``seeds`` in order, each with its seeds: as few as lines of at
    most ``MAX_LINE`` characters hold (an engine reads no longer line)."""
    head = f"{'trace' if trace else 'play'} {search}"
    requests, size, part = [], len(head), []
    for seed in seeds:
        if part and size + 1 + len(str(seed)) > MAX_LINE:
            requests.append(part)
            size, part = len(head), []
        size += 1 + len(str(seed))
        part.append(seed)
    requests += [part] if part else []
    return [(" ".join([head, *map(str, part)]), part) for part in requests]


def words_of(line: str) -> list[str]:
    if len(line) > MAX_LINE:
        raise ProtocolError(f"a line of {len(line):,} characters (at most {MAX_LINE:,})")
    if not line.isprintable():
        raise ProtocolError(f"a line with control characters: {line[:80]!r}")
    return line.split()


def read_declaration(lines) -> Declaration:
    """The handshake's lines, up to and including ``ready N`` (``lines`` yields them)."""
    name, params, depths, auto, nodes = None, {}, None, False, False
    for line in lines:
        words = words_of(line)
        if not words:
            continue
        verb, rest = words[0], words[1:]
        if verb == "name" and rest:
            name = " ".join(rest)[:200]
        elif verb == "param":
            param = _param(rest, line)
            if param.name in params:
                raise ProtocolError(f"parameter {param.name} declared twice")
            params[param.name] = param
        elif verb == "search" and rest[:1] == ["depth"] and len(rest) == 3:
            low, high = (_integer(word, line) for word in rest[1:])
            if low > high:
                raise ProtocolError(f"an empty range of depths: {line!r}")
            depths = (low, high)
        elif verb == "search" and rest in (["auto"], ["nodes"]):
            auto, nodes = auto or rest == ["auto"], nodes or rest == ["nodes"]
        elif verb == "ready" and len(rest) == 1:
            version = _integer(rest[0], line)
            if version != VERSION:
                raise ProtocolError(f"the engine speaks protocol {version}; tune2048 speaks "
                                    f"{VERSION}")
            if name is None:
                raise ProtocolError("no 'name' line before 'ready'")
            if depths is None and not auto and not nodes:
                raise ProtocolError("no 'search' line before 'ready': it plays at no setting")
            declared = Declaration(name, version, tuple(params.values()), depths, auto, nodes)
            for param in declared.params:
                if param.acts is not None and not declared.supports(param.acts):
                    raise ProtocolError(f"parameter {param.name} acts at {param.acts}, a search "
                                        f"it does not declare ({declared.searches()})")
            return declared
        elif verb == "error":
            raise ProtocolError(f"the engine reports an error: {' '.join(rest)}")
        else:
            raise ProtocolError(f"not a handshake line: {line!r}")
    raise ProtocolError("the engine ended before its 'ready' line")


def _param(words: list[str], line: str) -> Param:
    """``NAME int|float DEFAULT [LOW HIGH] [KEY=VALUE ...]``: of the keys, version 1 knows
    ``acts``; others are ignored, so that later versions can add some (as a game line's)."""
    plain = list(itertools.takewhile(lambda word: "=" not in word, words))
    fields = _fields(words[len(plain):], line)
    if len(plain) not in (3, 5) or plain[1] not in ("int", "float"):
        raise ProtocolError(f"a parameter is 'param NAME int|float DEFAULT [LOW HIGH] "
                            f"[acts=SEARCH]', got {line!r}")
    if not NAME.fullmatch(words[0]):
        raise ProtocolError(f"not a parameter name: {words[0]!r} (letters, digits, _ . -)")
    acts = None
    if "acts" in fields:
        try:
            acts = Search.parse(fields["acts"])
        except ValueError:
            raise ProtocolError(f"parameter {words[0]}: acts= is a search (depth:N, auto or "
                                f"nodes:N): {line!r}") from None
    numbers = [_number(word, line) for word in plain[2:]]
    if words[1] == "int" and any(number != int(number) for number in numbers):
        raise ProtocolError(f"an int parameter with a value that is not whole: {line!r}")
    default, low, high = numbers[0], *(numbers[1:] or (None, None))
    if low is not None and not low <= default <= high:
        raise ProtocolError(f"parameter {words[0]}: default {default:g} outside [{low:g}, "
                            f"{high:g}]")
    return Param(words[0], words[1], default, low, high, acts)


def read_game(line: str) -> GameResult:
    """A ``game key=value ...`` line (unknown keys ignored, for later versions)."""
    words = words_of(line)
    if words[:1] != ["game"]:
        raise ProtocolError(f"expected a 'game' line, got {line!r}")
    fields = _fields(words[1:], line)
    missing = [key for key in ("seed", "score", "tile", "moves") if key not in fields]
    if missing:
        raise ProtocolError(f"a game line without {', '.join(missing)}: {line!r}")
    ints = {key: _integer(fields[key], line) for key in ("seed", "score", "tile", "moves",
                                                        "positions") if key in fields}
    seconds = _number(fields["seconds"], line) if "seconds" in fields else None
    if ints["tile"] < 2 or ints["tile"] & (ints["tile"] - 1):
        raise ProtocolError(f"a largest tile that is not a power of two: {line!r}")
    return GameResult(seconds=seconds, **ints)


def read_step(line: str) -> Spawn | Moved:
    """A transcript's ``spawn cell=C tile=T`` or ``move dir=D [board=HEX16]`` line."""
    words = words_of(line)
    if words[:1] not in (["spawn"], ["move"]):
        raise ProtocolError(f"expected a 'spawn', 'move' or 'game' line, got {line!r}")
    fields = _fields(words[1:], line)
    if words[:1] == ["spawn"] and "cell" in fields and "tile" in fields:
        cell, tile = _integer(fields["cell"], line), _integer(fields["tile"], line)
        if not 0 <= cell < 16 or tile not in (2, 4):
            raise ProtocolError(f"a spawn off the board or of another tile than 2 or 4: {line!r}")
        return Spawn(cell, tile)
    if words[:1] == ["move"] and fields.get("dir") in MOVE_NAMES:
        board = fields.get("board")
        if board is not None and not re.fullmatch(r"[0-9a-f]{16}", board):
            raise ProtocolError(f"a board is 16 hexadecimal ranks: {line!r}")
        ranks = tuple(int(rank, 16) for rank in board) if board else None
        return Moved(fields["dir"], ranks)
    raise ProtocolError(f"a 'spawn' line needs cell= and tile=, a 'move' line dir=up|down|"
                        f"left|right: {line!r}")


def _fields(words: list[str], line: str) -> dict[str, str]:
    fields = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key:
            raise ProtocolError(f"not a key=value word: {word!r} in {line!r}")
        fields.setdefault(key, value)
    return fields


def _integer(word: str, line: str) -> int:
    if not re.fullmatch(r"-?[0-9]{1,20}", word):
        raise ProtocolError(f"not an integer: {word!r} in {line!r}")
    return int(word)


def _number(word: str, line: str) -> float:
    try:
        number = float(word) if len(word) <= 40 else math.nan
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise ProtocolError(f"not a finite number: {word!r} in {line!r}")
    return number
