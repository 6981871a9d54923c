"""What a heuristic family is: named parameters, table building, and a plain-Python reference.

A family turns a weight vector into per-line lookup tables (65536 entries, indexed by a 16-bit
row or by a column gathered into a row) plus at most one cheap whole-board term, so that the
compiled search evaluates a board with a handful of lookups. ``reference`` computes the same value
the slow, obvious way; the tests hold the two together on thousands of random boards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from engine.kernels import LAYOUT_ROWS_COLUMN, LAYOUT_ROWS_HEAD, LAYOUT_SHARED


@dataclass(frozen=True)
class Param:
    """One tunable weight: its name, default value, documented range and meaning."""

    name: str
    default: float
    low: float
    high: float
    doc: str


@dataclass(frozen=True)
class LineTables:
    """What the compiled search needs, in one of three layouts (``engine.kernels``):

    - ``LAYOUT_SHARED``: ``rows`` holds one table that serves all four rows and four columns.
    - ``LAYOUT_ROWS_HEAD``: a table per row, and the snake head penalty (weight ``extra[0]``,
      per-rank tile values ``values``).
    - ``LAYOUT_ROWS_COLUMN``: a table per row, one ``column`` table for all four columns, and the
      mean-tile and corner terms (weights ``extra[0]`` and ``extra[1]``).
    """

    layout: int
    rows: tuple[np.ndarray, ...]
    column: np.ndarray | None = None
    extra: tuple[float, ...] = ()
    values: np.ndarray = field(default_factory=lambda: np.zeros(16))

    def __post_init__(self):
        expected = {LAYOUT_SHARED: (1, False), LAYOUT_ROWS_HEAD: (4, False),
                    LAYOUT_ROWS_COLUMN: (4, True)}[self.layout]
        if (len(self.rows), self.column is not None) != expected:
            raise ValueError(f"tables do not match layout {self.layout}")


class Family:
    """A parametric heuristic family. Subclasses set ``name``, ``params`` and the two evaluators."""

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

    def tables(self, weights: np.ndarray) -> LineTables:
        """Build the lookup tables for a weight vector (in ``params`` order)."""
        raise NotImplementedError

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        """The heuristic of a 4x4 grid of ranks, computed directly (slow; for tests)."""
        raise NotImplementedError


@cache
def row_ranks() -> np.ndarray:
    """All 65536 rows as a (65536, 4) array of ranks; column 0 is the lowest nibble."""
    rows = np.arange(65536, dtype=np.int64)
    return np.stack([(rows >> (4 * i)) & 0xF for i in range(4)], axis=1)


@cache
def row_values() -> np.ndarray:
    """All 65536 rows as tile values (0 for empty), float64."""
    ranks = row_ranks()
    return np.where(ranks > 0, np.exp2(ranks), 0.0)


def grid_lines(ranks: list[list[int]]) -> tuple[list[list[int]], list[list[int]]]:
    """The rows (left to right) and columns (top to bottom) of a 4x4 grid."""
    rows = [list(r) for r in ranks]
    cols = [[ranks[r][c] for r in range(4)] for c in range(4)]
    return rows, cols
