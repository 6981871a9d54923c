"""Depth policies: how many chance layers the search looks ahead before each move.

A policy is a plain ``int`` (a fixed depth, as always), ``ByBoard`` (deeper as the board fills:
``max(floor, distinct tiles - offset)``, at most ``cap``; the rule of the widely used C++ engine,
nneonneo/2048-ai, with its floor 3 and offset 2) or ``NodeBudget`` (iterative deepening: depth 1,
2, ... each searched afresh within a budget of evaluated positions; the move of the deepest
completed depth is played). Every policy counts, never times, so a game stays a pure
function of its seed on every machine.

``parse_depth`` is the one reader of a policy, wherever one is written (a config's
``search.depth``, a weights file's ``depth``, every command's ``--depth``, ``Solver(depth=...)``);
docs/rules.md ("How a policy is written, and how dear it may be") says the same for people. The
text form, spaces around the text and around its parts ignored::

    POLICY  := INTEGER | auto | auto:SETTING,SETTING,... | nodes:INTEGER
    SETTING := floor=INTEGER | offset=INTEGER | cap=INTEGER      (each key at most once)
    INTEGER := ASCII digits, a sign allowed, digits grouped by single underscores (200_000)

YAML also takes ``{auto: null}``, ``{auto: {floor: 3, cap: 6}}`` and ``{nodes: 200000}``.
Where a policy is read says how dear it may be (``Limits``): playing allows any policy and a
fixed depth to 8; a tuning run, which plays thousands of games, at most the cost of a depth-5
search (``TUNING``). Every refusal is a ``DepthError`` of one line in our words, whatever was
written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from engine.echo import echo
from engine.errors import BadInput

MAX_FIXED_DEPTH = 8  # a fixed depth beyond this takes minutes a move
DEEPEST = 14  # what the board rule can ask on a full board of 16 distinct tiles (16 - 2)
MAX_NODES = 10**12  # positions per move: far beyond anything playable, still exact in a float64
# each setting of the board rule: (least, most)
SETTINGS = {"floor": (0, DEEPEST), "offset": (0, 16), "cap": (1, DEEPEST)}
MAX_DIGITS = 20  # an integer of more digits is beyond every limit: messages give its length
INTEGER = re.compile(r"[-+]?[0-9]+(?:_[0-9]+)*")  # [0-9], not \d: no other script's digits
FORMS = "an integer, auto, auto:cap=N (or floor=N, offset=N) or nodes:N"

# what the compiled search reads (engine.kernels.decide): the kind, then up to three integers;
# the kinds are engine.kernels' (not imported from there: reading a config never loads numba)
KIND_FIXED, KIND_BY_BOARD, KIND_NODES = 0, 1, 2


class DepthError(BadInput):
    """A depth policy that is malformed, or dearer than where it is read allows; the caller's
    message names the place (``--depth``, ``search.depth``, a weights file's ``depth``)."""


@dataclass(frozen=True)
class Limits:
    """The one rule for how dear a policy may be where it is read: a fixed depth of at most
    ``fixed``, the board rule capped at ``cap`` or less, a node budget of at most ``nodes``
    positions a move; ``where`` ends a refusal (" in a tuning run")."""

    fixed: int
    cap: int
    nodes: int
    where: str = ""


# Playing: any policy (uncapped auto looks up to 14 layers ahead late in a game: minutes a move).
PLAYING = Limits(fixed=MAX_FIXED_DEPTH, cap=DEEPEST, nodes=MAX_NODES)
# A tuning run plays thousands of games: at most about what a depth-5 search costs (a depth-5
# move evaluates about 20,000,000 positions: ROUGH_POSITIONS).
TUNING = Limits(fixed=5, cap=5, nodes=20_000_000, where=" in a tuning run")


@dataclass(frozen=True)
class ByBoard:
    """``max(floor, distinct tiles - offset)`` chance layers, at most ``cap`` (None: up to
    ``DEEPEST``): shallow while the board is simple, deep when it is crowded and games are
    decided."""

    floor: int = 3
    offset: int = 2
    cap: int | None = None

    def __post_init__(self):
        for key, (low, high) in SETTINGS.items():
            if key != "cap" or self.cap is not None:
                _check_int(f"auto: {key}", getattr(self, key), low, high)
        if self.cap is not None and self.cap < self.floor:
            raise DepthError(f"auto: cap {self.cap} is below the floor {self.floor}")

    def depth_for(self, distinct_tiles: int) -> int:
        """The depth this rule searches on a board with ``distinct_tiles`` distinct tiles."""
        return min(max(self.floor, distinct_tiles - self.offset), self.cap or DEEPEST)

    def __str__(self) -> str:
        changed = [f"{key}={value}" for key, value, default in (
            ("floor", self.floor, 3), ("offset", self.offset, 2), ("cap", self.cap, None))
            if value != default]
        return "auto" + (":" + ",".join(changed) if changed else "")


@dataclass(frozen=True)
class NodeBudget:
    """Iterative deepening within ``nodes`` evaluated positions per move (every depth's search
    counted): a depth predicted not to fit is not started, one that passes the budget is
    abandoned, and the deepest completed depth decides; depth 1 always completes. Without the
    prediction a budget spent most of itself on searches it then abandoned: on boards of real
    games, 200,000 positions cost 4.1x a depth-3 search for a mean depth of 3.2; with it, 1.3x."""

    nodes: int

    def __post_init__(self):
        _check_int("nodes", self.nodes, 1, MAX_NODES)

    def __str__(self) -> str:
        return f"nodes:{self.nodes}"


DepthPolicy = int | ByBoard | NodeBudget


def parse_depth(value: object, limits: Limits = PLAYING) -> DepthPolicy:
    """A policy from what a person wrote (module docstring), no dearer than ``limits`` allow;
    ``DepthError`` saying in one line what is wrong."""
    if isinstance(value, bool) or not isinstance(value, (int, ByBoard, NodeBudget, str, Mapping)):
        raise DepthError(f"expected {FORMS}, got {_shown(value)}")
    if isinstance(value, str):
        policy = _from_text(value.strip(), limits)
    elif isinstance(value, Mapping):
        policy = _from_mapping(value)
    else:
        policy = value
    _check_limits(policy, limits)
    return policy


def chosen_depth(given: DepthPolicy | str | None,
                 recorded: DepthPolicy) -> DepthPolicy | str:
    """The depth a player searches: ``given`` (``--depth``, ``Solver.from_file(depth=...)``)
    where one is, else ``recorded``, the weights file's (what its weights were tuned at)."""
    return recorded if given is None else given


def policy_params(policy: DepthPolicy) -> tuple[int, int, int, int]:
    """The policy as the compiled search reads it: (kind, a, b, c)."""
    if isinstance(policy, ByBoard):
        return KIND_BY_BOARD, policy.floor, policy.offset, policy.cap or DEEPEST
    if isinstance(policy, NodeBudget):
        return KIND_NODES, policy.nodes, DEEPEST, 0
    return KIND_FIXED, policy, 0, 0


# positions one move evaluates at depths 1, 2, 3, ... (classic, cutoff 1e-4, whole games), roughly
ROUGH_POSITIONS = (150, 3_000, 80_000, 1_500_000, 20_000_000, 250_000_000)


def rough_depth(policy: DepthPolicy) -> int:
    """The fixed depth a policy costs about as much as over a game: what sizes work before any
    game has been timed (a prior, never a result). The board rule spends most moves a few
    layers above its floor; a node budget, the deepest depth it usually completes."""
    if isinstance(policy, ByBoard):
        return min(policy.cap or DEEPEST, policy.floor + 3)
    if isinstance(policy, NodeBudget):
        return max(1, sum(positions <= policy.nodes for positions in ROUGH_POSITIONS))
    return policy


def to_yaml(policy: DepthPolicy) -> int | str:
    """The policy as a config or weights file writes it (``parse_depth`` reads it back)."""
    return policy if isinstance(policy, int) else str(policy)


def _from_text(text: str, limits: Limits) -> DepthPolicy:
    if INTEGER.fullmatch(text):
        return _number(text, "", 0, limits.fixed, limits.where)
    name, colon, rest = text.partition(":")
    name, rest = name.strip(), rest.strip()
    if name == "auto":
        return ByBoard(**_settings(rest)) if colon else ByBoard()
    if name == "nodes" and colon:
        if not INTEGER.fullmatch(rest):
            raise DepthError(_out_of_range("nodes", 1, MAX_NODES, _shown(rest)))
        return NodeBudget(_number(rest, "nodes", 1, MAX_NODES))
    raise DepthError(f"expected {FORMS}, got {_shown(text)}")


def _settings(text: str) -> dict[str, int]:
    """The board rule's ``KEY=INTEGER,...`` settings; a key given twice is refused, as YAML
    refuses one in the mapping form."""
    settings: dict[str, int] = {}
    for item in text.split(","):
        key, equals, number = (part.strip() for part in item.partition("="))
        if not equals or not INTEGER.fullmatch(number):
            raise DepthError(f"auto: expected KEY=INTEGER settings (floor, offset, cap), got "
                             f"{_shown(item.strip())}")
        if key not in SETTINGS:
            raise _unknown(key)
        if key in settings:
            raise DepthError(f"auto: {key} is given twice")
        settings[key] = _number(number, f"auto: {key}", *SETTINGS[key])
    return settings


def _from_mapping(value: Mapping) -> DepthPolicy:
    if len(value) != 1 or next(iter(value)) not in ("auto", "nodes"):
        raise DepthError(f"expected one key, auto or nodes, got {_shown(list(value))}")
    name, settings = next(iter(value.items()))
    if name == "nodes":
        return NodeBudget(settings)
    if settings is None:
        return ByBoard()
    if not isinstance(settings, Mapping):
        raise DepthError(f"auto: expected a mapping of floor, offset, cap, got {_shown(settings)}")
    for key in settings:
        if key not in SETTINGS:
            raise _unknown(key)
    return ByBoard(**settings)


def _unknown(key: object) -> DepthError:
    return DepthError(f"auto: unknown setting {_shown(key)} (floor, offset, cap)")


def _check_limits(policy: DepthPolicy, limits: Limits) -> None:
    """The one rule of ``Limits``, in one set of messages."""
    if isinstance(policy, ByBoard):
        if (policy.cap or DEEPEST) > limits.cap:
            raise DepthError(
                f"expected the board rule capped at {limits.cap} or less{limits.where} (e.g. "
                f"auto:cap={limits.cap}; uncapped, a move late in a game searches up to "
                f"{DEEPEST} layers: minutes), got {policy}")
    elif isinstance(policy, NodeBudget):
        if policy.nodes > limits.nodes:
            raise DepthError(
                f"expected a node budget of at most {limits.nodes:,} positions a move"
                f"{limits.where} (about a depth-{limits.fixed} move), got {policy.nodes:,}")
    else:
        _check_int("", policy, 0, limits.fixed, limits.where)


def _check_int(what: str, value: object, low: int, high: int, where: str = "") -> None:
    """Refuse a setting ``what`` (empty: the depth itself) outside ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise DepthError(_out_of_range(what, low, high, _shown(value), where))


def _number(text: str, what: str, low: int, high: int, where: str = "") -> int:
    """An ``INTEGER`` of the text form: one of more than ``MAX_DIGITS`` digits is refused here,
    in our words (Python's ``int()`` refuses one of more than 4,300 digits in its own)."""
    digits = text.lstrip("+-").replace("_", "").lstrip("0") or "0"
    if len(digits) > MAX_DIGITS:
        raise DepthError(_out_of_range(what, low, high, f"an integer of {len(digits):,} digits",
                                       where))
    return -int(digits) if text.startswith("-") else int(digits)


def _out_of_range(what: str, low: int, high: int, shown: str, where: str = "") -> str:
    prefix = f"{what}: " if what else ""
    return f"{prefix}expected an integer from {low:,} to {high:,}{where}, got {shown}"


def _shown(value: object) -> str:
    """A bad value as messages show it: cut short, and an integer of more than ``MAX_DIGITS``
    digits by its length (Python writes none of more than 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**MAX_DIGITS:
        return f"an integer of {_digits(value):,} digits"
    try:
        return echo(value)
    except ValueError:  # a list or mapping holding such an integer
        return f"a {type(value).__name__} too large to show"


def _digits(value: int) -> int:
    """How many decimal digits ``value`` has, without writing it out."""
    size, count = abs(value), max(1, int(abs(value).bit_length() * 0.30102999566398120))
    while 10**count <= size:  # the estimate from its bits is never too high
        count += 1
    return count
