"""The public family API: what a heuristic family is, and numpy helpers to build its tables.

A family has ordered, named parameters (``Param``: default, documented range, meaning) and two
evaluations of the same heuristic:

- ``heuristic(weights)`` builds what the compiled search uses: an ``engine.heuristic.Heuristic``,
  a sum of terms over 65536-entry line tables, built with numpy over all lines at once (the
  ``row_*`` helpers give every line's ranks, values and empty count);
- ``reference(ranks, weights)`` computes the same value the slow, obvious way, from a 4x4 grid of
  ranks. ``tune family check`` and the tests hold the two together on thousands of boards.

The built-in families (``engine/families/*.py``) are written with nothing but this API, so a
family in a user's own file can do whatever they do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from engine.heuristic import Heuristic


@dataclass(frozen=True)
class Param:
    """One tunable weight: its name, default value, documented range and meaning.

    The range is where the family promises finite, sensible tables: configs use it as the default
    box and ``tune family check`` samples inside it.
    """

    name: str
    default: float
    low: float
    high: float
    doc: str


class Family:
    """A parametric heuristic family. Subclasses set ``name``, ``summary``, ``params`` and write
    ``heuristic`` and ``reference``; weight vectors come in ``params`` order."""

    name: str = ""
    summary: str = ""
    params: tuple[Param, ...] = ()

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def defaults(self) -> dict[str, float]:
        return {p.name: p.default for p in self.params}

    def vector(self, weights: dict[str, float]) -> np.ndarray:
        """Order a {name: value} mapping as this family's weight vector; missing names raise."""
        missing = [n for n in self.param_names if n not in weights]
        unknown = [n for n in weights if n not in self.param_names]
        if missing or unknown:
            raise ValueError(
                f"family {self.name!r}: missing parameters {missing}, unknown parameters {unknown}"
            )
        values = np.array([float(weights[n]) for n in self.param_names])
        bad = [n for n, v in zip(self.param_names, values) if not math.isfinite(v)]
        if bad:
            raise ValueError(f"family {self.name!r}: non-finite values for {bad}")
        return values

    def named(self, vector) -> dict[str, float]:
        return {n: float(v) for n, v in zip(self.param_names, vector)}

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        """The heuristic for a weight vector, as terms over line tables."""
        raise NotImplementedError

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        """The heuristic of a 4x4 grid of ranks (0 = empty), computed directly."""
        raise NotImplementedError


@cache
def row_ranks() -> np.ndarray:
    """Every 16-bit line as a (65536, 4) int64 array of ranks; column 0 is the lowest nibble
    (a row's leftmost cell, a column's top cell)."""
    rows = np.arange(65536, dtype=np.int64)
    ranks = np.stack([(rows >> (4 * i)) & 0xF for i in range(4)], axis=1)
    ranks.setflags(write=False)
    return ranks


@cache
def row_values() -> np.ndarray:
    """Every line as tile values, (65536, 4) float64: 2**rank, 0 for an empty cell."""
    ranks = row_ranks()
    values = np.where(ranks > 0, np.left_shift(1, ranks), 0).astype(np.float64)  # exact
    values.setflags(write=False)
    return values


def rank_powers(exponent: float) -> np.ndarray:
    """r ** exponent for the ranks r = 0..15, as 16 floats (0 ** a negative exponent is inf).

    Computed with Python's ``math.pow``, the C library's result on every CPU: numpy's vectorised
    power picks a SIMD implementation by CPU, and two machines can then differ in the last bit of
    a table entry, and so, rarely, in a move. Build per-rank values this way (or in plain Python),
    and index them with ``row_ranks()``, to play the same games everywhere.
    """
    return np.array([math.pow(r, exponent) if r or exponent >= 0 else math.inf
                     for r in range(16)])


@cache
def row_empty() -> np.ndarray:
    """Every line's number of empty cells, (65536,) float64."""
    empty = (row_ranks() == 0).sum(axis=1).astype(np.float64)
    empty.setflags(write=False)
    return empty


def grid_lines(ranks: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    """The rows (left to right) and columns (top to bottom) of a 4x4 grid, for references."""
    rows = [list(r) for r in ranks]
    cols = [[ranks[r][c] for r in range(4)] for c in range(4)]
    return rows, cols
