"""The search workspace: one float64 array holding everything the compiled search reads or writes.

Layout (indices in ``engine.kernels``): a 16-slot header (search options, counters), then each
term's parameters (a combiner's weight and exponent; a board term's weight and 16 per-rank
values), then each distinct line table (65536 entries; a table object used by several lines or
terms is stored once), then the transposition table: ``slots`` entries of (key high 32 bits, key
low 32 bits, depth, value) and a list of the slots in use, so clearing costs only what was used.
Keys are split in two halves because a float64 holds 32-bit integers exactly but not 64-bit ones.

Alongside the array goes the heuristic's *terms*: the tuple of named tuples of offsets that the
compiled search dispatches on (see ``engine.kernels``).
"""

from __future__ import annotations

import numpy as np

from engine import finite
from engine import kernels as k
from engine.heuristic import BoardTerm, Heuristic, HeuristicError, LineSum

DEFAULT_TT_BITS = 16
FLOOR_FRACTION = 1e-6
FLOOR_MIN = 1e-12  # keeps tau / (2 - h / tau) clear of underflow for tiny or all-zero weights


def build_workspace(
    heuristic: Heuristic, cutoff: float, use_tt: bool = True, tt_bits: int = DEFAULT_TT_BITS
) -> tuple[np.ndarray, tuple]:
    """Check a heuristic and lay it out with the search options; return (workspace, terms).

    Raises ``engine.heuristic.HeuristicError`` for a heuristic the search cannot use.
    """
    check(heuristic)
    layout = _Layout()
    terms = tuple(layout.place(term) for term in heuristic.terms)
    tt_offset = layout.end
    slots = 1 << tt_bits
    ws = np.zeros(tt_offset + 5 * slots, dtype=np.float64)
    for offset, values in layout.writes:
        ws[offset : offset + len(values)] = values
    ws[k.WS_FLOOR] = max(heuristic.scale() * FLOOR_FRACTION, FLOOR_MIN)
    ws[k.WS_CUTOFF] = cutoff
    ws[k.WS_TT_ON] = 1.0 if use_tt else 0.0
    ws[k.WS_TT_OFF] = tt_offset
    ws[k.WS_TT_BITS] = tt_bits
    ws[k.WS_ABORT_AT] = np.inf  # no node budget until a policy sets one
    ws[tt_offset + 2 : tt_offset + 4 * slots : 4] = -1.0  # every slot empty
    return ws, terms


def check(heuristic: Heuristic) -> None:
    """Raise ``HeuristicError`` naming the first term the search cannot use."""
    terms = heuristic.terms if isinstance(heuristic, Heuristic) else None
    if not isinstance(terms, (tuple, list)) or not terms:
        raise HeuristicError("a family's heuristic() must return a Heuristic with at least one "
                             f"term, got {heuristic!r:.80}")
    for i, term in enumerate(terms):
        if isinstance(term, LineSum):
            where = f"term {i} (LineSum {term.layout!r})"
            _known(term.layout, k.LINE_LAYOUTS, "layout", where)
            if term.combiner != "identity":
                _known(term.combiner, k.COMBINERS, "combiner", where)
            term.check(where, len(k.LINE_LAYOUTS[term.layout][0]._fields))
        elif isinstance(term, BoardTerm):
            where = f"term {i} (BoardTerm {term.name!r})"
            _known(term.name, k.BOARD_TERMS, "board term", where)
            term.check(where)
        else:
            raise HeuristicError(f"term {i}: expected a LineSum or a BoardTerm, got "
                                 f"{type(term).__name__}")
    problem = finite.terms_problem(heuristic)  # finite tables can still sum to inf
    if problem:
        raise HeuristicError(problem)


def _known(name, registry: dict, what: str, where: str) -> None:
    if name not in registry:
        known = ", ".join(registry) + (", identity" if what == "combiner" else "")
        raise HeuristicError(f"{where}: unknown {what} {name!r} (known: {known})")


class _Layout:
    """Hands out workspace offsets and records what to write there."""

    def __init__(self):
        self.end = k.WS_HEADER
        self.writes: list[tuple[int, np.ndarray]] = []
        self.table_offsets: dict[tuple[int, float], int] = {}

    def reserve(self, values) -> np.uint64:
        offset = self.end
        values = np.asarray(values, dtype=np.float64)
        self.writes.append((offset, values))
        self.end += len(values)
        return np.uint64(offset)

    def table(self, table: np.ndarray, weight: float) -> np.uint64:
        key = (id(table), weight)  # one copy per table object (kept alive by the heuristic)
        if key not in self.table_offsets:
            self.table_offsets[key] = int(self.reserve(table * weight if weight != 1.0 else table))
        return np.uint64(self.table_offsets[key])

    def place(self, term: LineSum | BoardTerm):
        if isinstance(term, BoardTerm):
            cls, _ = k.BOARD_TERMS[term.name]
            return cls(self.reserve(np.concatenate([[term.weight], term.rank_values()])))
        cls, _ = k.LINE_LAYOUTS[term.layout]
        if term.combiner == "identity":  # the weight goes into the tables: no extra work
            return cls(*(self.table(t, float(term.weight)) for t in term.tables))
        combiner, _ = k.COMBINERS[term.combiner]
        params = self.reserve([term.weight, term.exponent])
        return combiner(params, cls(*(self.table(t, 1.0) for t in term.tables)))

