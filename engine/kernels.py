"""Compiled hot loops: move tables, table-driven heuristics, expectimax search and self-play.

Every function here is a numba kernel over ints and float arrays: no Python objects, no
exceptions. Callers pass typed values (``np.uint64`` boards, ``np.int64`` depths), so each
kernel compiles one specialisation per heuristic shape and never a literal-typed one
(``cache=True`` plus recursion breaks on those). The move tables are module globals, which numba
freezes into the compiled code; they are built in this file so that numba's cache, which only
watches this file, never holds stale tables.

Everything that changes per candidate (term parameters, line tables, search options,
transposition table, counters) lives in one float64 *workspace* array, the only array passed down
the recursion: each array argument of a recursive numba function costs a reference-count update
and a large struct per call, and a second one made the search about 1.6x slower.
``engine.workspace`` builds it; the ``WS_*`` indices below are its header.

Beside the workspace goes the heuristic's *terms*: a tuple of small named tuples of workspace
offsets, one per term, whose class says what the term computes (see "Heuristic terms" below).
numba resolves each class when it compiles, so every distinct heuristic shape gets its own
compiled search and a leaf evaluation never branches on the family.

Search semantics (depth ``d`` = number of chance layers after the root move):
  root:    for each legal move m, value(m) = chance(board after m, d)
  chance:  d == 0 or cumulative probability below the cutoff -> leaf(board);
           else the average over every empty cell x {2: 0.9, 4: 0.1} of max(board after spawn, d-1)
  max:     the best chance(board after m, d - 1) over legal moves m, or 0 if no move is legal
  leaf:    the heuristic, floored so that every live board scores above 0 (a dead board's value).
"""

from collections import namedtuple

import numpy as np
from numba import njit
from numba.core.registry import cpu_target
from numba.extending import overload

from engine.signals import deferred_interrupts

# numba builds its code generator (LLVM's target machine and pass managers) at the first njit
# below. Built here with Ctrl-C held (engine.signals): an interrupt raised inside the constructor
# of one of those LLVM objects leaves it half made, and its finaliser then prints "Exception
# ignored" behind the caller's back.
with deferred_interrupts():
    cpu_target.target_context.codegen()

# ---------------------------------------------------------------------------------------------
# Workspace header (see engine/workspace.py for the term parameters, tables and transposition
# table that follow it)
WS_FLOOR = 1  # tau: heuristic values below tau are squashed into (0, tau)
WS_CUTOFF = 2  # cumulative-probability cutoff; 0 = exact fixed depth
WS_TT_ON = 3  # 1.0 = transposition table on
WS_MOVES = 4  # counter: moves evaluated (executed inside the search)
WS_TT_USED = 5  # number of used transposition-table slots (their indices follow the slots)
WS_ABORT_AT = 6  # a search abandons itself once the moves counter passes this (a node budget)
WS_ABORTED = 7  # 1.0 once a search was abandoned
WS_DEPTH = 8  # the depth the last decision searched (the deepest completed, under a budget)

# The kinds of depth policy ``decide`` takes, as engine.depth.policy_params writes them (defined
# here, where numba freezes them, so that its cache never holds other values; a test checks that
# engine.depth agrees)
KIND_FIXED, KIND_BY_BOARD, KIND_NODES = 0, 1, 2
WS_TT_OFF = 14  # offset of the transposition table
WS_TT_BITS = 15  # log2 of the number of slots
WS_HEADER = 16

U0 = np.uint64(0)
U4 = np.uint64(4)
U12 = np.uint64(12)
U15 = np.uint64(15)
U16 = np.uint64(16)
U24 = np.uint64(24)
U32 = np.uint64(32)
U48 = np.uint64(48)
ROW_MASK = np.uint64(0xFFFF)
HASH_MUL = np.uint64(0x9E3779B97F4A7C15)
LOW32 = np.uint64(0xFFFFFFFF)
P4_THRESHOLD = np.uint64(900719925474099)  # floor(0.1 * 2**53): a spawn is a 4 below this


@njit(cache=True)
def _slide_left(line):
    """Slide and merge one line of 4 ranks toward index 0; return (ranks, score)."""
    out = np.zeros(4, np.int64)
    score = 0
    n = 0
    merged_last = False
    for i in range(4):
        r = line[i]
        if r == 0:
            continue
        if n > 0 and not merged_last and out[n - 1] == r and r < 15:
            out[n - 1] = r + 1
            score += 1 << (r + 1)
            merged_last = True
        else:
            out[n] = r
            n += 1
            merged_last = False
    return out, score


def _eager(signature: str):
    """``njit(signature, cache=True)``, which loads (or compiles) the code at once: with Ctrl-C
    held (``engine.signals``), since loading it must not be cut."""

    def decorate(func):
        with deferred_interrupts():
            return njit(signature, cache=True)(func)

    return decorate


def _build_tables():
    """Per-row XOR deltas for the four moves, merge scores, and per-row static facts.

    The arrays are made here and filled by compiled code that returns nothing. A compiled
    function that *returns* arrays boxes them by calling back into Python (numba reads each
    array's dtype through ``_numba_unpickle``), where a pending Ctrl-C raises; numba's tuple
    boxing does not check for that and stores NULL in the tuple, and unpacking it segfaulted
    when Ctrl-C came at that moment of the import (tests/engine/test_family_interrupts.py).
    """
    uint64s = [np.zeros(65536, np.uint64) for _ in range(5)]
    floats = [np.zeros(65536, np.float64) for _ in range(4)]
    left, right, up, down, row_max = uint64s
    score_left, score_right, row_empty, row_value_sum = floats
    _fill_tables(left, right, up, down, score_left, score_right, row_max, row_empty,
                 row_value_sum)
    return left, right, up, down, score_left, score_right, row_max, row_empty, row_value_sum


@njit(cache=True)
def _fill_tables(left, right, up, down, score_left, score_right, row_max, row_empty,
                 row_value_sum):
    """Fill ``_build_tables``' arrays, one entry per 16-bit row."""
    line = np.zeros(4, np.int64)
    rev = np.zeros(4, np.int64)
    for row in range(65536):
        for i in range(4):
            line[i] = (row >> (4 * i)) & 15
            rev[3 - i] = line[i]
        res, sc = _slide_left(line)
        res_rev, sc_rev = _slide_left(rev)
        new_left = 0
        new_right = 0
        col_left = 0
        col_right = 0
        for i in range(4):
            new_left |= res[i] << (4 * i)
            new_right |= res_rev[3 - i] << (4 * i)
            col_left |= (res[i] ^ line[i]) << (16 * i)
            col_right |= (res_rev[3 - i] ^ line[i]) << (16 * i)
            row_max[row] = max(row_max[row], line[i])
            if line[i] == 0:
                row_empty[row] += 1.0
            else:
                row_value_sum[row] += float(1 << line[i])
        left[row] = np.uint64(row ^ new_left)
        right[row] = np.uint64(row ^ new_right)
        up[row] = np.uint64(col_left)
        down[row] = np.uint64(col_right)
        score_left[row] = sc
        score_right[row] = sc_rev


with deferred_interrupts():  # loading compiled code must not be cut (engine.signals)
    (
        LEFT_XOR,
        RIGHT_XOR,
        UP_XOR,
        DOWN_XOR,
        SCORE_LEFT,
        SCORE_RIGHT,
        ROW_MAX,
        ROW_EMPTY,
        ROW_VALUE_SUM,
    ) = _build_tables()


@njit(cache=True, inline="always")
def transpose(x):
    """Swap rows and columns: cell (r, c) goes to (c, r)."""
    a1 = x & np.uint64(0xF0F00F0FF0F00F0F)
    a2 = x & np.uint64(0x0000F0F00000F0F0)
    a3 = x & np.uint64(0x0F0F00000F0F0000)
    a = a1 | (a2 << U12) | (a3 >> U12)
    b1 = a & np.uint64(0xFF00FF0000FF00FF)
    b2 = a & np.uint64(0x00FF00FF00000000)
    b3 = a & np.uint64(0x00000000FF00FF00)
    return b1 | (b2 >> U24) | (b3 << U24)


@njit(cache=True, inline="always")
def execute_move(board, direction):
    """The board after a move (0 up, 1 down, 2 left, 3 right); equal to ``board`` if illegal."""
    ret = board
    if direction == 0 or direction == 1:
        t = transpose(board)
        table = UP_XOR if direction == 0 else DOWN_XOR
        ret ^= table[t & ROW_MASK]
        ret ^= table[(t >> U16) & ROW_MASK] << U4
        ret ^= table[(t >> U32) & ROW_MASK] << np.uint64(8)
        ret ^= table[(t >> U48) & ROW_MASK] << U12
    else:
        table = LEFT_XOR if direction == 2 else RIGHT_XOR
        ret ^= table[board & ROW_MASK]
        ret ^= table[(board >> U16) & ROW_MASK] << U16
        ret ^= table[(board >> U32) & ROW_MASK] << U32
        ret ^= table[(board >> U48) & ROW_MASK] << U48
    return ret


@_eager("float64(uint64, int64)")
def move_score(board, direction):
    """Points a move earns: the sum of the values of the tiles its merges create."""
    lines = transpose(board) if direction <= 1 else board
    table = SCORE_LEFT if direction == 0 or direction == 2 else SCORE_RIGHT
    total = 0.0
    for i in range(4):
        total += table[(lines >> np.uint64(16 * i)) & ROW_MASK]
    return total


@njit(cache=True, inline="always")
def count_empty(board):
    """Number of empty cells (nibble tricks; the empty board is the one case that overflows)."""
    if board == U0:
        return np.int64(16)
    x = board
    x |= (x >> np.uint64(2)) & np.uint64(0x3333333333333333)
    x |= x >> np.uint64(1)
    x = ~x & np.uint64(0x1111111111111111)
    x += x >> U32
    x += x >> U16
    x += x >> np.uint64(8)
    x += x >> U4
    return np.int64(x & U15)


@njit(cache=True, inline="always")
def _max_rank(board):
    m = ROW_MAX[board & ROW_MASK]
    for s in (U16, U32, U48):
        r = ROW_MAX[(board >> s) & ROW_MASK]
        m = max(m, r)
    return m


@njit(cache=True, inline="always")
def _row(board, shift):
    return (board >> shift) & ROW_MASK


@njit(cache=True, inline="always")
def _four_rows(board, ws, r0, r1, r2, r3):
    """Sum of the four rows' entries, row i looked up in the table starting at offset ri."""
    return (
        ws[r0 + _row(board, U0)]
        + ws[r1 + _row(board, U16)]
        + ws[r2 + _row(board, U32)]
        + ws[r3 + _row(board, U48)]
    )


# ---------------------------------------------------------------------------------------------
# Heuristic terms. A heuristic is a tuple of terms whose values add up. Each term is a named tuple
# of uint64 workspace offsets; its class picks its evaluator from TERM_EVALUATORS when numba
# compiles the caller. Three registries name them for ``engine.workspace``:
#
#   LINE_LAYOUTS: a whole-board aggregate, the sum of 8 per-line table lookups (4 rows, then 4
#       columns read top to bottom as rows). Fields: the offsets of its tables.
#   COMBINERS: a function of an aggregate A, weight * f(A); the identity needs no combiner (its
#       weight is multiplied into the tables). Fields: the offset of (weight, exponent) and the
#       aggregate.
#   BOARD_TERMS: whole-board terms that are not line sums. Field: the offset of the term's
#       weight, followed by 16 per-rank values v(0..15).
#
# Adding a term is one place: a named tuple class, its evaluator and its registry entry here
# (engine.workspace lays out any registered term; engine.heuristic documents what each means).

SharedLines = namedtuple("SharedLines", "table")
RowsAndColumns = namedtuple("RowsAndColumns", "rows columns")
EachRow = namedtuple("EachRow", "row0 row1 row2 row3")
EachLine = namedtuple("EachLine", "row0 row1 row2 row3 col0 col1 col2 col3")
Log2 = namedtuple("Log2", "params inner")
Reciprocal = namedtuple("Reciprocal", "params inner")
Power = namedtuple("Power", "params inner")
PerTile = namedtuple("PerTile", "params inner")
HeadPenalty = namedtuple("HeadPenalty", "params")
MeanTile = namedtuple("MeanTile", "params")
Corner = namedtuple("Corner", "params")
TopTile = namedtuple("TopTile", "params")

COMBINER_FLOOR = 1e-12  # combiners see max(aggregate, this): log2 and 1/x stay finite


def _shared_lines(board, ws, term):
    """One table for all eight lines."""
    t = term.table
    return _four_rows(board, ws, t, t, t, t) + _four_rows(transpose(board), ws, t, t, t, t)


def _rows_and_columns(board, ws, term):
    """One table for the four rows, another for the four columns."""
    r, c = term.rows, term.columns
    return _four_rows(board, ws, r, r, r, r) + _four_rows(transpose(board), ws, c, c, c, c)


def _each_row(board, ws, term):
    """A table per row, no column term (a position-dependent, row-only heuristic)."""
    return _four_rows(board, ws, term.row0, term.row1, term.row2, term.row3)


def _each_line(board, ws, term):
    """A table per row and a table per column."""
    return _four_rows(board, ws, term.row0, term.row1, term.row2, term.row3) + _four_rows(
        transpose(board), ws, term.col0, term.col1, term.col2, term.col3
    )


def _log2(board, ws, term):
    return ws[term.params] * np.log2(max(term_value(board, ws, term.inner), COMBINER_FLOOR))


def _reciprocal(board, ws, term):
    return ws[term.params] / max(term_value(board, ws, term.inner), COMBINER_FLOOR)


def _power(board, ws, term):
    base = max(term_value(board, ws, term.inner), COMBINER_FLOOR)
    return ws[term.params] * base ** ws[term.params + 1]


def _per_tile(board, ws, term):
    """weight * A / (number of tiles): A's mean over the tiles (0 on an empty board)."""
    tiles = 16 - count_empty(board)
    if tiles == 0:
        return 0.0
    return ws[term.params] * term_value(board, ws, term.inner) / tiles


def _head_penalty(board, ws, term):
    """-weight * (v(top) - v(head))**2 when the top tile is not at the head (top-left) cell."""
    top = np.int64(_max_rank(board))
    head = np.int64(board & U15)
    if head == top:
        return 0.0
    gap = ws[term.params + 1 + top] - ws[term.params + 1 + head]
    return -ws[term.params] * gap * gap


def _mean_tile(board, ws, term):
    """weight * the mean value of the non-empty tiles (0 on an empty board)."""
    tiles = 0.0
    value_sum = 0.0
    for shift in (U0, U16, U32, U48):
        row = _row(board, shift)
        tiles += 4.0 - ROW_EMPTY[row]
        value_sum += ROW_VALUE_SUM[row]
    if tiles > 0.0:
        return ws[term.params] * value_sum / tiles
    return 0.0


def _corner(board, ws, term):
    """weight * v(top rank), when the top tile sits at the top-left corner."""
    top = np.int64(_max_rank(board))
    if np.int64(board & U15) == top:
        return ws[term.params] * ws[term.params + 1 + top]
    return 0.0


def _top_tile(board, ws, term):
    """weight * v(top rank), wherever the top tile is."""
    return ws[term.params] * ws[term.params + 1 + np.int64(_max_rank(board))]


LINE_LAYOUTS = {
    "shared": (SharedLines, _shared_lines),
    "rows_cols": (RowsAndColumns, _rows_and_columns),
    "per_row": (EachRow, _each_row),
    "per_line": (EachLine, _each_line),
}
COMBINERS = {
    "log2": (Log2, _log2),
    "reciprocal": (Reciprocal, _reciprocal),
    "power": (Power, _power),
    "per_tile": (PerTile, _per_tile),
}
BOARD_TERMS = {
    "head_penalty": (HeadPenalty, _head_penalty),
    "mean_tile": (MeanTile, _mean_tile),
    "corner": (Corner, _corner),
    "top_tile": (TopTile, _top_tile),
}
TERM_EVALUATORS = {
    cls: evaluator
    for registry in (LINE_LAYOUTS, COMBINERS, BOARD_TERMS)
    for cls, evaluator in registry.values()
}


def term_value(board, ws, term):
    """The value of one term; compiled only (the term's class picks its evaluator)."""
    raise NotImplementedError("compiled only")


@overload(term_value)
def _term_value_overload(board, ws, term):
    return TERM_EVALUATORS[term.instance_class]


def raw_heuristic(board, ws, terms):
    """The heuristic before flooring: the sum of its terms; compiled only.

    ``terms`` is a tuple of term named tuples; it unrolls when numba compiles the caller, so each
    heuristic shape gets straight-line code.
    """
    raise NotImplementedError("compiled only")


@overload(raw_heuristic)
def _raw_heuristic_overload(board, ws, terms):
    if len(terms) == 1:
        return lambda board, ws, terms: term_value(board, ws, terms[0])
    return lambda board, ws, terms: term_value(board, ws, terms[0]) + raw_heuristic(
        board, ws, terms[1:]
    )


@njit(cache=True, inline="always")
def leaf_value(board, ws, terms):
    """The heuristic floored into (0, inf): identity above tau, tau / (2 - h / tau) below.

    The squash is continuous with slope 1 at tau and strictly increasing, so it keeps the order of
    boards while making every live board worth more than a dead one (0), whatever the weights.
    """
    h = raw_heuristic(board, ws, terms)
    tau = ws[WS_FLOOR]
    if h >= tau:
        return h
    return tau / (2.0 - h / tau)


@njit(cache=True)
def heuristic_value(board, ws, terms):
    """``leaf_value`` for one board, from Python."""
    return leaf_value(board, ws, terms)


@_eager("void(float64[::1])")
def tt_clear(ws):
    """Empty the transposition table by walking the list of used slots."""
    base = np.int64(ws[WS_TT_OFF])
    slots = np.int64(1) << np.int64(ws[WS_TT_BITS])
    used_list = base + 4 * slots
    for k in range(np.int64(ws[WS_TT_USED])):
        slot = np.int64(ws[used_list + k])
        ws[base + 4 * slot + 2] = -1.0
    ws[WS_TT_USED] = 0.0


@njit(cache=True, inline="always")
def _all_moves(board):
    """The four moved boards (up, down, left, right), sharing one transpose."""
    t = transpose(board)
    up = board ^ UP_XOR[t & ROW_MASK] ^ (UP_XOR[(t >> U16) & ROW_MASK] << U4)
    up ^= (UP_XOR[(t >> U32) & ROW_MASK] << np.uint64(8)) ^ (UP_XOR[(t >> U48) & ROW_MASK] << U12)
    down = board ^ DOWN_XOR[t & ROW_MASK] ^ (DOWN_XOR[(t >> U16) & ROW_MASK] << U4)
    down ^= (DOWN_XOR[(t >> U32) & ROW_MASK] << np.uint64(8)) ^ (
        DOWN_XOR[(t >> U48) & ROW_MASK] << U12
    )
    left = board ^ LEFT_XOR[board & ROW_MASK] ^ (LEFT_XOR[(board >> U16) & ROW_MASK] << U16)
    left ^= (LEFT_XOR[(board >> U32) & ROW_MASK] << U32) ^ (
        LEFT_XOR[(board >> U48) & ROW_MASK] << U48
    )
    right = board ^ RIGHT_XOR[board & ROW_MASK] ^ (RIGHT_XOR[(board >> U16) & ROW_MASK] << U16)
    right ^= (RIGHT_XOR[(board >> U32) & ROW_MASK] << U32) ^ (
        RIGHT_XOR[(board >> U48) & ROW_MASK] << U48
    )
    return up, down, left, right


@njit(cache=True)
def chance_node(board, depth, cprob, ws, terms):
    """Expected value of ``board`` (just moved, before the spawn) with ``depth`` chance layers."""
    cutoff = ws[WS_CUTOFF]
    if depth == 0 or cprob < cutoff:
        return leaf_value(board, ws, terms)
    if ws[WS_MOVES] > ws[WS_ABORT_AT]:  # over a node budget: this search's values are dropped
        ws[WS_ABORTED] = 1.0
        return 0.0
    use_tt = ws[WS_TT_ON] > 0.0
    slot_base = 0
    key_hi = float(board >> U32)
    key_lo = float(board & LOW32)
    if use_tt:
        bits = np.uint64(64 - np.int64(ws[WS_TT_BITS]))
        slot = np.int64((board * HASH_MUL) >> bits)
        slot_base = np.int64(ws[WS_TT_OFF]) + 4 * slot
        if (
            ws[slot_base + 2] == depth
            and ws[slot_base] == key_hi
            and ws[slot_base + 1] == key_lo
        ):
            return ws[slot_base + 3]
    empty = count_empty(board)
    p2 = cprob * 0.9 / empty
    p4 = cprob * 0.1 / empty
    total = 0.0
    tmp = board
    tile = np.uint64(1)
    for _cell in range(16):
        if (tmp & U15) == U0:
            for spawn in range(2):
                child = board | (tile if spawn == 0 else tile << np.uint64(1))
                # max node, inline (numba handles self-recursion, not mutual recursion)
                child_prob = p2 if spawn == 0 else p4
                up, down, left, right = _all_moves(child)
                leaves = depth == 1 or child_prob < cutoff  # children scored here, no call
                best = 0.0
                # a loop, not four copies: the inlined heuristic and the call compile once (a
                # family's kernels compile in two thirds of the time), and it runs as fast
                for direction in range(4):
                    moved = up if direction == 0 else (
                        down if direction == 1 else (left if direction == 2 else right))
                    if moved == child:
                        continue
                    if leaves:
                        best = max(best, leaf_value(moved, ws, terms))
                    else:
                        best = max(best, chance_node(moved, depth - 1, child_prob, ws, terms))
                total += best * (0.9 if spawn == 0 else 0.1)
        tmp >>= U4
        tile <<= U4
    ws[WS_MOVES] += 8 * empty
    value = total / empty
    if use_tt:
        if ws[slot_base + 2] < 0.0:
            used = np.int64(ws[WS_TT_USED])
            slots = np.int64(1) << np.int64(ws[WS_TT_BITS])
            ws[np.int64(ws[WS_TT_OFF]) + 4 * slots + used] = float(
                (slot_base - np.int64(ws[WS_TT_OFF])) // 4
            )
            ws[WS_TT_USED] = used + 1
        ws[slot_base] = key_hi
        ws[slot_base + 1] = key_lo
        ws[slot_base + 2] = depth
        ws[slot_base + 3] = value
    return value


@njit(cache=True)
def move_values(board, depth, ws, out, terms):
    """Fill ``out[m]`` with the expectimax value of move m (-1 when illegal); return the best move.

    The best move is the first legal move with the highest value (order: up, down, left, right),
    so a legal move is always returned when one exists; -1 when none is legal.
    """
    tt_clear(ws)
    best_move = -1
    best_value = -np.inf
    for direction in range(4):
        moved = execute_move(board, direction)
        ws[WS_MOVES] += 1
        if moved == board:
            out[direction] = -1.0
            continue
        value = chance_node(moved, np.int64(depth), np.float64(1.0), ws, terms)
        out[direction] = value
        if value > best_value:
            best_value = value
            best_move = direction
    return best_move


@njit(cache=True, inline="always")
def distinct_tiles(board):
    """The number of distinct tiles on ``board`` (empty cells not counted)."""
    seen = 0
    for shift in range(0, 64, 4):
        rank = np.int64((board >> np.uint64(shift)) & U15)
        if rank:
            seen |= 1 << rank
    count = 0
    while seen:
        seen &= seen - 1
        count += 1
    return count


@njit(cache=True)
def decide(board, kind, a, b, c, ws, out, scratch, terms):
    """``move_values`` at the depth a policy gives ``board`` (``engine.depth``): a fixed depth
    ``a``; the board rule ``max(a, distinct tiles - b)``, at most ``c``; a node budget: depths 1
    to ``b`` in turn, each searched afresh, within ``a`` evaluated positions counted from the
    decision's start: a depth whose search the last two predict not to fit (each depth costing
    the last one times the last ratio) is not started, and one that passes the budget is
    abandoned; the deepest completed one decides (depth 1 always completes). ``scratch`` holds
    a search's values until it is known to have completed."""
    if kind != KIND_NODES:
        depth = a if kind == KIND_FIXED else min(max(a, distinct_tiles(board) - b), c)
        ws[WS_DEPTH] = depth
        return move_values(board, depth, ws, out, terms)
    limit = ws[WS_MOVES] + a
    best = -1
    last = 0.0  # the positions of the last completed depth's search, and of the one before
    before = 0.0
    for depth in range(1, b + 1):
        if before > 0.0 and ws[WS_MOVES] + last * (last / before) > limit:
            break  # predicted not to fit: searching it would be abandoned
        ws[WS_ABORT_AT] = limit if depth > 1 else np.inf
        ws[WS_ABORTED] = 0.0
        start = ws[WS_MOVES]
        move = move_values(board, np.int64(depth), ws, scratch, terms)
        if ws[WS_ABORTED] > 0.0:
            break
        best = move
        out[:] = scratch
        ws[WS_DEPTH] = depth
        before, last = last, ws[WS_MOVES] - start
        if move < 0 or ws[WS_MOVES] >= limit:
            break
    ws[WS_ABORT_AT] = np.inf
    ws[WS_ABORTED] = 0.0
    return best


@njit(cache=True, inline="always")
def splitmix64(state):
    """One step of SplitMix64: returns (new state, 64-bit output)."""
    state = state + HASH_MUL
    z = state
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return state, z ^ (z >> np.uint64(31))


@_eager("Tuple((uint64, uint64))(uint64, uint64)")
def spawn_tile(board, state):
    """Put a 2 (p 0.9) or a 4 (p 0.1) on a uniformly chosen empty cell; return (board, state).

    Two draws from the game's SplitMix64 stream: the first picks the k-th empty cell in row-major
    order, k = (high 32 bits * empties) >> 32; the second gives a 4 when its top 53 bits are below
    0.1 * 2**53. Integer-only, so the same seed gives the same spawns on every machine.
    """
    empty = np.uint64(count_empty(board))
    state, r = splitmix64(state)
    k = ((r >> U32) * empty) >> U32
    state, r2 = splitmix64(state)
    rank = np.uint64(2) if (r2 >> np.uint64(11)) < P4_THRESHOLD else np.uint64(1)
    shift = U0
    seen = U0
    for _cell in range(16):
        if ((board >> shift) & U15) == U0:
            if seen == k:
                return board | (rank << shift), state
            seen += np.uint64(1)
        shift += U4
    return board, state


@njit(cache=True)
def play_game(seed, kind, a, b, c, ws, max_moves, terms):
    """Play one game from an empty board with two spawns, each move at the depth the policy
    (``decide``) gives it; stop when no move is legal.

    Returns (final board, score, moves played, moves evaluated by the search).
    """
    state = np.uint64(seed)
    board = U0
    board, state = spawn_tile(board, state)
    board, state = spawn_tile(board, state)
    score = 0.0
    moves = 0
    values = np.zeros(4)
    scratch = np.zeros(4)
    ws[WS_MOVES] = 0.0
    while max_moves < 0 or moves < max_moves:
        best = decide(board, kind, a, b, c, ws, values, scratch, terms)
        if best < 0:
            break
        score += move_score(board, best)
        board = execute_move(board, best)
        board, state = spawn_tile(board, state)
        moves += 1
    return board, score, moves, ws[WS_MOVES]


# What engine.rules calls from Python, loaded now with Ctrl-C held (the other kernels are loaded
# per heuristic shape by engine.solver.compiled_kernels, held too).
with deferred_interrupts():
    execute_move(U0, np.int64(0))
