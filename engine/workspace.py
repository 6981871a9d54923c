"""The search workspace: one float64 array holding everything the compiled search reads or writes.

Layout (indices in ``engine.kernels``): a 64-slot header (search options, counters, the
whole-board term's weights and per-rank values), then each line table (65536 entries), then the
transposition table: ``slots`` entries of (key high 32 bits, key low 32 bits, depth, value) and a
list of the slots in use, so clearing costs only what was used. Keys are split in two halves
because a float64 holds 32-bit integers exactly but not 64-bit ones.

Alongside the array goes the *layout*: a tuple of the tables' offsets whose length tells the
compiled search which evaluator to use (see ``engine.families.base.LineTables``).
"""

from __future__ import annotations

import numpy as np

from engine import kernels as k
from engine.families import LineTables

TABLE_SIZE = 65536
DEFAULT_TT_BITS = 16
FLOOR_FRACTION = 1e-6
FLOOR_MIN = 1e-12  # keeps tau / (2 - h / tau) clear of underflow for tiny or all-zero weights


def build_workspace(
    tables: LineTables, cutoff: float, use_tt: bool = True, tt_bits: int = DEFAULT_TT_BITS
) -> tuple[np.ndarray, tuple[np.uint64, ...]]:
    """Lay out a family's tables and the search options; return (workspace, layout)."""
    line_tables = list(tables.rows) + ([tables.column] if tables.column is not None else [])
    offsets = [k.WS_HEADER + i * TABLE_SIZE for i in range(len(line_tables))]
    tt_offset = k.WS_HEADER + len(line_tables) * TABLE_SIZE
    slots = 1 << tt_bits
    ws = np.zeros(tt_offset + 5 * slots, dtype=np.float64)
    for offset, table in zip(offsets, line_tables):
        ws[offset : offset + TABLE_SIZE] = table
    ws[k.WS_FLOOR] = floor_scale(line_tables, tables.extra)
    ws[k.WS_CUTOFF] = cutoff
    ws[k.WS_TT_ON] = 1.0 if use_tt else 0.0
    ws[k.WS_TT_OFF] = tt_offset
    ws[k.WS_TT_BITS] = tt_bits
    ws[k.WS_EXTRA : k.WS_EXTRA + len(tables.extra)] = tables.extra
    ws[k.WS_VALUES : k.WS_VALUES + 16] = tables.values
    ws[tt_offset + 2 : tt_offset + 4 * slots : 4] = -1.0  # every slot empty
    return ws, tuple(np.uint64(o) for o in offsets)


def floor_scale(line_tables: list[np.ndarray], extra: tuple[float, ...]) -> float:
    """tau: a millionth of the largest table entry, so it scales with the weights.

    Leaves scoring below tau are squashed into (0, tau) (see ``engine.kernels.leaf_value``). With
    any sensible weights, real positions score far above it and their values are left unchanged.
    """
    largest = max(float(np.abs(t).max()) for t in line_tables)
    largest = max(largest, max((abs(x) for x in extra), default=0.0))
    return max(largest * FLOOR_FRACTION, FLOOR_MIN)
