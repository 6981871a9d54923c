"""What a family hands the search: a heuristic as a sum of named terms over lookup tables.

A heuristic is a ``Heuristic``: a tuple of terms whose values add up to a board's value.

- ``LineSum``: a whole-board *aggregate*, the sum of per-line table lookups over the 4 rows and
  the 4 columns, passed through a *combiner*. A table has 65536 entries, one per 16-bit line: a
  row's leftmost cell is its lowest nibble, and a column is read top to bottom (its top cell is
  the lowest nibble), so the helpers in ``engine.families.base`` serve both. Layouts:

  ============  ======  ===============================================================
  layout        tables  lines
  ============  ======  ===============================================================
  ``shared``    1       the one table for all eight lines
  ``rows_cols`` 2       the first for the four rows, the second for the four columns
  ``per_row``   4       a table per row (top to bottom), no column term
  ``per_line``  8       a table per row (top to bottom), then per column (left to right)
  ============  ======  ===============================================================

  Combiners, applied to the aggregate A (``weight`` w, ``exponent`` p):
  ``identity`` w * A; ``log2`` w * log2(A'); ``reciprocal`` w / A'; ``power`` w * A' ** p, where
  A' = max(A, COMBINER_FLOOR) keeps log2 and 1/x finite; ``per_tile`` w * A / n, A's mean over
  the n non-empty tiles (0 on an empty board). ``combine`` computes the same in Python for a
  family's reference.
- ``BoardTerm``: a whole-board term that is not a line sum, by name, with weight w and per-rank
  values v(0..15) (default v(r) = r):
  ``head_penalty`` -w * (v(top) - v(head))**2 when the largest tile is not at the top-left (head)
  cell; ``corner`` w * v(top) when it is; ``top_tile`` w * v(top) wherever it is; ``mean_tile``
  w * the mean value (2**rank) of the non-empty tiles (0 on an empty board). "top" is the largest
  rank on the board.

This module only describes; ``engine.workspace`` checks the names against the compiled terms
(``engine.kernels``, where each is defined) and lays everything out for the search. It imports no
numba, so reading a config or listing families stays cheap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.errors import BadInput

TABLE_SIZE = 65536
COMBINER_FLOOR = 1e-12  # equal to engine.kernels.COMBINER_FLOOR (a test holds them together)


class HeuristicError(BadInput):
    """A family built a heuristic the search cannot use; the message says which term and why."""


@dataclass(frozen=True, eq=False)
class LineSum:
    """A sum of per-line table lookups through a combiner (see the module docstring)."""

    layout: str
    tables: tuple[np.ndarray, ...]
    combiner: str = "identity"
    weight: float = 1.0
    exponent: float = 1.0

    def check(self, where: str, tables_expected: int) -> None:
        if not isinstance(self.tables, (tuple, list)) or len(self.tables) != tables_expected:
            count = len(self.tables) if isinstance(self.tables, (tuple, list)) else "not a tuple"
            raise HeuristicError(f"{where}: layout {self.layout!r} takes {tables_expected} "
                                 f"tables, got {count}")
        for i, table in enumerate(self.tables):
            _check_table(table, f"{where}, table {i}")
        _check_number(self.weight, f"{where}: weight")
        _check_number(self.exponent, f"{where}: exponent")


@dataclass(frozen=True, eq=False)
class BoardTerm:
    """A whole-board term by name, with its weight and values v(rank) (None: v(r) = r)."""

    name: str
    weight: float
    values: np.ndarray | None = None

    def rank_values(self) -> np.ndarray:
        """v(0..15) as 16 floats."""
        if self.values is None:
            return np.arange(16, dtype=np.float64)
        return np.asarray(self.values, dtype=np.float64)

    def check(self, where: str) -> None:
        _check_number(self.weight, f"{where}: weight")
        if self.values is not None:
            values = np.asarray(self.values)
            if values.shape != (16,) or not np.all(np.isfinite(values)):
                raise HeuristicError(f"{where}: values must be 16 finite numbers, one per rank")


@dataclass(frozen=True, eq=False)
class Heuristic:
    """A board's value: the sum of these terms."""

    terms: tuple[LineSum | BoardTerm, ...]

    def scale(self) -> float:
        """The size of the values this heuristic takes, for the search's floor.

        The largest table entry of an identity sum (weight included), and |weight| times
        max(1, |f(8 x the largest entry)|) for the other terms.
        """
        sizes = [0.0]
        for term in self.terms:
            if isinstance(term, BoardTerm):
                sizes.append(abs(term.weight))
                continue
            largest = max(float(np.abs(t).max()) for t in term.tables)
            if term.combiner == "identity":
                sizes.append(abs(term.weight) * largest)
            else:
                reach = combine(term.combiner, 8.0 * largest, 1.0, term.exponent, tiles=1)
                sizes.append(abs(term.weight) * max(1.0, abs(reach)))
        return max(sizes)


def combine(combiner: str, aggregate: float, weight: float = 1.0, exponent: float = 1.0,
            tiles: int | None = None) -> float:
    """A combiner applied to an aggregate, in plain Python (for families' references);
    ``per_tile`` needs the board's number of non-empty ``tiles``."""
    if combiner == "identity":
        return weight * aggregate
    if combiner == "per_tile":
        if tiles is None:
            raise HeuristicError("combiner 'per_tile' needs the number of tiles")
        return weight * aggregate / tiles if tiles else 0.0
    floored = max(aggregate, COMBINER_FLOOR)
    if combiner == "log2":
        return weight * math.log2(floored)
    if combiner == "reciprocal":
        return weight / floored
    if combiner == "power":
        return weight * floored**exponent
    raise HeuristicError(f"unknown combiner {combiner!r}")


def _check_table(table, where: str) -> None:
    if not isinstance(table, np.ndarray):
        raise HeuristicError(f"{where}: expected a numpy array, got {type(table).__name__}")
    if table.shape != (TABLE_SIZE,):
        raise HeuristicError(f"{where}: expected shape ({TABLE_SIZE},), got {table.shape}")
    if not np.issubdtype(table.dtype, np.floating) and not np.issubdtype(table.dtype, np.integer):
        raise HeuristicError(f"{where}: expected a numeric dtype, got {table.dtype}")
    bad = np.flatnonzero(~np.isfinite(table))
    if bad.size:
        raise HeuristicError(f"{where}: entry {int(bad[0])} (line {_line_text(int(bad[0]))}) is "
                             f"{table[bad[0]]}; tables must be finite")


def _check_number(value, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise HeuristicError(f"{where}: expected a number, got {value!r}")
    if not math.isfinite(float(value)):
        raise HeuristicError(f"{where}: expected a finite number, got {value}")


def _line_text(code: int) -> str:
    """A 16-bit line as its four tiles, e.g. [2, 0, 0, 4]."""
    ranks = [(code >> (4 * i)) & 0xF for i in range(4)]
    return "[" + ", ".join(str(1 << r) if r else "0" for r in ranks) + "]"
