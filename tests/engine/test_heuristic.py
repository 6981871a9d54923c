"""engine.heuristic and engine.workspace: every layout, combiner and board term, compiled against
the plain definitions, and the errors a family author sees for a heuristic the search cannot use.
"""

import math

import numpy as np
import pytest

from engine import kernels
from engine.board import ranks_to_board
from engine.families import BoardTerm, Heuristic, HeuristicError, LineSum, combine, row_ranks
from engine.heuristic import COMBINER_FLOOR
from engine.solver import Solver
from engine.workspace import build_workspace

RNG = np.random.default_rng(11)
TABLES = [RNG.uniform(0.5, 3.0, 65536) for _ in range(8)]


def compiled(heuristic: Heuristic, board: int) -> float:
    """The raw (unfloored) compiled value of a board."""
    ws, terms = build_workspace(heuristic, 0.0, False, 1)
    ws[kernels.WS_FLOOR] = -np.inf
    return float(kernels.heuristic_value(np.uint64(board), ws, terms))


def lines(ranks) -> list[int]:
    """The 8 line codes of a grid: rows top to bottom, then columns left to right (top cell in
    the lowest nibble)."""
    rows = [sum(ranks[r][c] << (4 * c) for c in range(4)) for r in range(4)]
    cols = [sum(ranks[r][c] << (4 * r) for r in range(4)) for c in range(4)]
    return rows + cols


def random_grid(density=0.6):
    ranks = RNG.integers(1, 16, size=(4, 4))
    ranks[RNG.random((4, 4)) >= density] = 0
    return ranks.tolist()


LAYOUT_LOOKUPS = {
    "shared": (1, lambda t: [t[0]] * 8),
    "rows_cols": (2, lambda t: [t[0]] * 4 + [t[1]] * 4),
    "per_row": (4, lambda t: list(t) + [None] * 4),
    "per_line": (8, lambda t: list(t)),
}


@pytest.mark.parametrize("layout", LAYOUT_LOOKUPS)
@pytest.mark.parametrize("combiner", ["identity", "log2", "reciprocal", "power", "per_tile"])
def test_every_layout_and_combiner_matches_its_definition(layout, combiner):
    count, lookups = LAYOUT_LOOKUPS[layout]
    tables = tuple(TABLES[:count])
    heuristic = Heuristic((LineSum(layout, tables, combiner, weight=1.7, exponent=0.6),))
    for _ in range(200):
        ranks = random_grid(RNG.uniform(0.0, 1.0))
        aggregate = sum(t[code] for t, code in zip(lookups(tables), lines(ranks)) if t is not None)
        tiles = sum(1 for row in ranks for r in row if r)
        expected = combine(combiner, aggregate, 1.7, 0.6, tiles=tiles)
        assert compiled(heuristic, ranks_to_board(ranks)) == pytest.approx(expected, rel=1e-12)


def test_combiners_floor_their_aggregate_and_per_tile_is_zero_on_an_empty_board():
    assert COMBINER_FLOOR == kernels.COMBINER_FLOOR
    zero = np.zeros(65536)
    for combiner in ("log2", "reciprocal", "power"):
        heuristic = Heuristic((LineSum("shared", (zero,), combiner, 2.0, 0.5),))
        expected = combine(combiner, 0.0, 2.0, 0.5)
        assert math.isfinite(expected)
        assert compiled(heuristic, 0x1) == pytest.approx(expected, rel=1e-12)
    per_tile = Heuristic((LineSum("shared", (TABLES[0],), "per_tile", 3.0),))
    assert compiled(per_tile, 0) == 0.0
    with pytest.raises(HeuristicError, match="number of tiles"):
        combine("per_tile", 1.0)


def values_of(ranks):
    return [[2.0**r if r else 0.0 for r in row] for row in ranks]


BOARD_TERMS = {
    # name -> the plain definition, given the grid of ranks, the weight and v(rank)
    "head_penalty": lambda g, w, v: (
        0.0 if g[0][0] == max(map(max, g)) else -w * (v[max(map(max, g))] - v[g[0][0]]) ** 2),
    "corner": lambda g, w, v: w * v[max(map(max, g))] if g[0][0] == max(map(max, g)) else 0.0,
    "top_tile": lambda g, w, v: w * v[max(map(max, g))],
    "mean_tile": lambda g, w, v: w * (
        sum(map(sum, values_of(g))) / sum(1 for row in g for r in row if r)),
}


@pytest.mark.parametrize("name", BOARD_TERMS)
@pytest.mark.parametrize("values", [None, "custom"])
def test_every_board_term_matches_its_definition(name, values):
    v = RNG.uniform(-5.0, 50.0, 16) if values else np.arange(16.0)
    term = BoardTerm(name, 2.5, v if values else None)
    at_corner = off_corner = 0
    for i in range(300):
        ranks = random_grid(0.7)
        if i % 3 == 0:  # put the top tile at the corner often enough
            ranks[0][0] = max(map(max, ranks)) or 1
        expected = BOARD_TERMS[name](ranks, 2.5, v)
        got = compiled(Heuristic((term,)), ranks_to_board(ranks))
        assert got == pytest.approx(expected, rel=1e-12, abs=1e-12), (ranks, name)
        at_corner += ranks[0][0] == max(map(max, ranks))
        off_corner += ranks[0][0] != max(map(max, ranks))
    assert at_corner > 50 and off_corner > 50


def test_terms_add_up_and_a_shape_compiles_once():
    shared = LineSum("shared", (TABLES[0],))
    corner = BoardTerm("corner", 3.0)
    ranks = random_grid()
    board = ranks_to_board(ranks)
    both = compiled(Heuristic((shared, corner)), board)
    assert both == pytest.approx(
        compiled(Heuristic((shared,)), board) + compiled(Heuristic((corner,)), board), rel=1e-12)
    before = len(kernels.heuristic_value.signatures)
    other = Heuristic((LineSum("shared", (TABLES[1],)), BoardTerm("corner", -1.0)))
    compiled(other, board)  # same shape, other numbers: no new specialisation
    assert len(kernels.heuristic_value.signatures) == before


def test_a_table_used_by_several_lines_is_stored_once():
    column = TABLES[4]
    four = Heuristic((LineSum("per_line", tuple(TABLES[:4]) + (column,) * 4),))
    ws, _ = build_workspace(four, 0.0, False, 1)
    eight = Heuristic((LineSum("per_line", tuple(TABLES[:8])),))
    ws8, _ = build_workspace(eight, 0.0, False, 1)
    assert len(ws8) - len(ws) == 3 * 65536


def test_identity_weight_scales_the_stored_table_and_the_floor_follows_the_scale():
    heuristic = Heuristic((LineSum("shared", (TABLES[0],), weight=4.0), BoardTerm("corner", 9.0)))
    ws, terms = build_workspace(heuristic, 0.0, False, 1)
    offset = int(terms[0].table)
    assert np.array_equal(ws[offset : offset + 65536], 4.0 * TABLES[0])
    assert heuristic.scale() == pytest.approx(4.0 * TABLES[0].max())
    assert ws[kernels.WS_FLOOR] == pytest.approx(heuristic.scale() * 1e-6)


@pytest.mark.parametrize(
    ("heuristic", "message"),
    [
        (None, "must return a Heuristic"),
        (Heuristic(()), "at least one term"),
        (Heuristic(("shared",)), "term 0: expected a LineSum or a BoardTerm, got str"),
        (Heuristic((LineSum("diagonal", (TABLES[0],)),)), "unknown layout 'diagonal'"),
        (Heuristic((LineSum("shared", (TABLES[0],), "sqrt"),)), "unknown combiner 'sqrt'"),
        (Heuristic((BoardTerm("edge", 1.0),)), "unknown board term 'edge'"),
        (Heuristic((LineSum("rows_cols", (TABLES[0],)),)), "takes 2 tables, got 1"),
        (Heuristic((LineSum("shared", (TABLES[0][:100],)),)), r"shape \(65536,\), got \(100,\)"),
        (Heuristic((LineSum("shared", (list(TABLES[0]),)),)), "expected a numpy array"),
        (Heuristic((LineSum("shared", (TABLES[0].astype(complex),)),)), "numeric dtype"),
        (Heuristic((LineSum("shared", (np.where(row_ranks()[:, 0] == 3, np.inf, 0.0),)),)),
         r"entry 3 \(line \[8, 0, 0, 0\]\) is inf"),
        (Heuristic((LineSum("shared", (TABLES[0],), weight=math.nan),)), "weight: expected a finite"),
        (Heuristic((BoardTerm("corner", 1.0, np.ones(15)),)), "16 finite numbers"),
    ],
)
def test_a_heuristic_the_search_cannot_use_is_refused_with_the_term_and_reason(heuristic, message):
    with pytest.raises(HeuristicError, match=message):
        build_workspace(heuristic, 0.0)


def test_the_solver_names_the_family_and_weights_of_a_bad_heuristic():
    from engine.families import Family, Param

    class Broken(Family):
        name = "broken"
        params = (Param("w", 1.0, 0.0, 2.0, "a weight"),)

        def heuristic(self, weights):
            return Heuristic((LineSum("shared", (np.full(65536, np.inf),)),))

    with pytest.raises(HeuristicError, match=r"family 'broken' at weights \{'w': 1.0\}.*is inf"):
        Solver(Broken())
