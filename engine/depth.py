"""Depth policies: how many chance layers the search looks ahead before each move.

A policy is a plain ``int`` (a fixed depth, as always), ``ByBoard`` (deeper as the board fills:
``max(floor, distinct tiles - offset)``, at most ``cap``; the rule of the widely used C++ engine,
nneonneo/2048-ai, with its floor 3 and offset 2) or ``NodeBudget`` (iterative deepening: depth 1,
2, ... each searched afresh within a budget of evaluated positions; the move of the deepest
completed depth is played). Every policy counts, never times, so a game stays a pure
function of its seed on every machine.

One text form everywhere a person writes one (configs, weights files, ``--depth``): ``3``,
``auto``, ``auto:floor=3,offset=2,cap=6`` (any of the three keys), ``nodes:200000``. YAML also
takes ``{auto: {floor: 3, cap: 6}}`` and ``{nodes: 200000}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MAX_FIXED_DEPTH = 8  # a fixed depth beyond this takes minutes a move
DEEPEST = 14  # what the board rule can ask on a full board of 16 distinct tiles (16 - 2)
MAX_NODES = 10**12  # positions per move: far beyond anything playable, still exact in a float64

# what the compiled search reads (engine.kernels.decide): the kind, then up to three integers;
# the kinds are engine.kernels' (not imported from there: reading a config never loads numba)
KIND_FIXED, KIND_BY_BOARD, KIND_NODES = 0, 1, 2


@dataclass(frozen=True)
class ByBoard:
    """``max(floor, distinct tiles - offset)`` chance layers, at most ``cap`` (None: up to
    ``DEEPEST``): shallow while the board is simple, deep when it is crowded and games are
    decided."""

    floor: int = 3
    offset: int = 2
    cap: int | None = None

    def __post_init__(self):
        _check_int("auto: floor", self.floor, 0, DEEPEST)
        _check_int("auto: offset", self.offset, 0, 16)
        if self.cap is not None:
            _check_int("auto: cap", self.cap, 1, DEEPEST)
            if self.cap < self.floor:
                raise ValueError(f"auto: cap {self.cap} is below the floor {self.floor}")

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


def parse_depth(value: object, max_fixed: int = MAX_FIXED_DEPTH) -> DepthPolicy:
    """A policy from what a person wrote (module docstring); ``ValueError`` saying what is
    wrong. ``max_fixed``: the deepest fixed depth allowed here."""
    if isinstance(value, DepthPolicy) and not isinstance(value, bool):
        policy = value
    elif isinstance(value, str):
        policy = _from_text(value.strip())
    elif isinstance(value, Mapping):
        policy = _from_mapping(value)
    else:
        raise ValueError(  # noqa: TRY004 - one error type for every malformed policy
            f"expected an integer depth, 'auto' or {{nodes: N}}, got {value!r}")
    if isinstance(policy, int):
        _check_int("", policy, 0, max_fixed)
    return policy


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


def _from_text(text: str) -> DepthPolicy:
    if re.fullmatch(r"[0-9]+", text):
        return int(text)
    name, _, settings = text.partition(":")
    if name == "auto":
        pairs = {}
        for item in filter(None, settings.split(",")):
            key, equals, number = item.partition("=")
            if not equals or not re.fullmatch(r"[0-9]+", number.strip()):
                raise ValueError(f"auto: expected KEY=INTEGER settings (floor, offset, cap), "
                                 f"got {item!r}")
            pairs[key.strip()] = int(number)
        return _by_board(pairs)
    if name == "nodes" and re.fullmatch(r"[0-9_]+", settings.strip()):
        return NodeBudget(int(settings.replace("_", "")))
    raise ValueError(f"expected an integer depth, 'auto', 'auto:cap=N' or 'nodes:N', got "
                     f"{text!r}")


def _from_mapping(value: Mapping) -> DepthPolicy:
    if len(value) != 1 or next(iter(value)) not in ("auto", "nodes"):
        raise ValueError(f"expected one key, auto or nodes, got {sorted(map(str, value))}")
    name, settings = next(iter(value.items()))
    if name == "nodes":
        return NodeBudget(settings)
    if settings is None:
        return ByBoard()
    if not isinstance(settings, Mapping):
        raise ValueError(  # noqa: TRY004 - one error type for every malformed policy
            f"auto: expected a mapping of floor, offset, cap, got {settings!r}")
    return _by_board(settings)


def _by_board(settings: Mapping) -> ByBoard:
    unknown = sorted(str(key) for key in settings if key not in ("floor", "offset", "cap"))
    if unknown:
        raise ValueError(f"auto: unknown setting {unknown[0]!r} (floor, offset, cap)")
    return ByBoard(**settings)


def _check_int(what: str, value: object, low: int, high: int) -> None:
    """Refuse a setting ``what`` (empty: the depth itself) outside ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        prefix = f"{what}: " if what else ""
        raise ValueError(f"{prefix}expected an integer from {low:,} to {high:,}, got {value!r}")
