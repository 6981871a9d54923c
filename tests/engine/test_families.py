"""engine.families: the table-driven heuristics against their plain-Python references.

The compiled leaf value is the family's heuristic floored into (0, inf) (see
``engine.kernels.leaf_value``). To compare the raw heuristic, these tests build a workspace and set
its floor tau to -inf: then h >= tau always holds and ``heuristic_value`` returns h untouched.
"""

import math

import numpy as np
import pytest

from engine import kernels
from engine.board import parse_board, ranks_to_board
from engine.families import FAMILIES, LineSum, get_family
from engine.families.classic import CLASSIC, line_reference
from engine.families.combined import COMBINED
from engine.families.features import FEATURES, GRADIENT
from engine.families.ranked import RANKED, knot_curve
from engine.families.snake import SNAKE, path_index
from engine.solver import Solver
from engine.workspace import build_workspace


def raw_workspace(family, weights) -> tuple[np.ndarray, tuple]:
    """A workspace and terms for ``weights`` whose floor is off (tau = -inf)."""
    heuristic = family.heuristic(np.asarray(weights, dtype=np.float64))
    ws, terms = build_workspace(heuristic, 0.0, False, 1)
    ws[kernels.WS_FLOOR] = -np.inf  # h >= -inf always: heuristic_value returns the raw h
    return ws, terms


def raw_value(workspace: tuple[np.ndarray, tuple], board: int) -> float:
    ws, terms = workspace
    return float(kernels.heuristic_value(np.uint64(board), ws, terms))


def line_tables(term: LineSum) -> list:
    """The table each line (rows 0-3, then columns 0-3) is looked up in; None: no lookup."""
    tables = list(term.tables)
    return {
        "shared": tables * 8,
        "rows_cols": tables[:1] * 4 + tables[1:] * 4,
        "per_row": tables + [None] * 4,
        "per_line": tables,
    }[term.layout]


def table_magnitude(heuristic, ranks) -> tuple[float, float]:
    """(signed sum, sum of absolute values) of the identity line-table entries this board looks
    up, weights included; the other terms are left to the caller."""
    rows = [sum(ranks[r][c] << (4 * c) for c in range(4)) for r in range(4)]
    cols = [sum(ranks[r][c] << (4 * r) for r in range(4)) for c in range(4)]  # top to bottom
    signed = magnitude = 0.0
    for term in heuristic.terms:
        if not isinstance(term, LineSum) or term.combiner != "identity":
            continue
        for table, code in zip(line_tables(term), rows + cols, strict=True):
            if table is not None:
                signed += term.weight * table[code]
                magnitude += abs(term.weight * table[code])
    return signed, magnitude


def random_ranks(rng, density: float) -> list[list[int]]:
    ranks = rng.integers(1, 16, size=(4, 4))
    ranks[rng.random((4, 4)) >= density] = 0
    return ranks.tolist()


def random_weights(family, rng) -> np.ndarray:
    return np.array([rng.uniform(p.low, p.high) for p in family.params])


# --- metadata --------------------------------------------------------------------------------


def test_the_built_in_families_are_registered():
    assert set(FAMILIES) == {"classic", "snake", "features", "combined", "ranked"}
    for name, family in FAMILIES.items():
        assert family.name == name
        assert get_family(name) is family


def test_unknown_family_is_a_value_error_listing_the_known_ones():
    with pytest.raises(ValueError, match="classic, snake, features, combined, ranked"):
        get_family("clasic")


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_parameter_metadata(family):
    names = family.param_names
    assert len(names) == len(set(names)), "parameter names are unique"
    for param in family.params:
        assert param.low < param.high, param.name
        assert param.low <= param.default <= param.high, param.name
        assert param.doc, param.name
    assert list(family.defaults()) == list(names)


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_vector_and_named_are_inverse_and_validate(family):
    defaults = family.defaults()
    vector = family.vector(defaults)
    assert list(vector) == [p.default for p in family.params]
    assert family.named(vector) == defaults
    first = family.param_names[0]
    with pytest.raises(ValueError, match=first):
        family.vector({k: v for k, v in defaults.items() if k != first})
    with pytest.raises(ValueError, match="bogus"):
        family.vector({**defaults, "bogus": 1.0})
    with pytest.raises(ValueError, match=first):
        family.vector({**defaults, first: math.nan})
    with pytest.raises(ValueError, match=first):
        family.vector({**defaults, first: math.inf})


# --- tables against references ---------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_table_heuristic_matches_reference_on_random_boards(family):
    rng = np.random.default_rng(2048)
    weight_sets = [family.vector(family.defaults())] + [
        random_weights(family, rng) for _ in range(3)
    ]
    densities = (0.0, 0.15, 0.4, 0.7, 0.9, 1.0)
    mismatches = []
    for weights in weight_sets:
        heuristic = family.heuristic(weights)
        ws = raw_workspace(family, weights)
        for i in range(1000):
            ranks = random_ranks(rng, densities[i % len(densities)])
            expected = family.reference(ranks, weights)
            got = raw_value(ws, ranks_to_board(ranks))
            # floating error scales with the size of the terms, not of their (cancelling) sum
            lines, magnitude = table_magnitude(heuristic, ranks)
            magnitude += abs(expected - lines)  # the other terms
            if not math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9 * magnitude + 1e-12):
                mismatches.append((ranks, list(weights), got, expected))
    assert mismatches == []


@pytest.mark.parametrize("family", FAMILIES.values(), ids=FAMILIES.keys())
def test_solver_evaluate_is_the_floored_reference(family):
    """Through the public API: evaluate = h above tau, tau^2 / (2 tau - h) below (both checked)."""
    rng = np.random.default_rng(7)
    solver = Solver(family, depth=0)
    weights = family.vector(solver.weights)
    tau = solver._ws[kernels.WS_FLOOR]
    assert tau > 0
    above = below = 0
    for i in range(1500):
        ranks = random_ranks(rng, (0.1, 0.5, 0.9)[i % 3])
        h = family.reference(ranks, weights)
        expected = h if h >= tau else tau * tau / (2 * tau - h)
        got = solver.evaluate(ranks_to_board(ranks))
        assert got > 0
        assert math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-9 * tau), (ranks, h)
        above += h >= tau
        below += h < tau
    assert above > 100 and below > 100, "both sides of the floor were checked"


def test_floor_is_a_millionth_of_the_largest_table_entry():
    solver = Solver("classic", depth=0)
    [term] = CLASSIC.heuristic(CLASSIC.vector(solver.weights)).terms
    largest = float(np.abs(term.tables[0]).max())
    assert solver._ws[kernels.WS_FLOOR] == pytest.approx(largest * 1e-6, rel=1e-12)


# --- classic ---------------------------------------------------------------------------------


def classic_only(**weights) -> np.ndarray:
    """A classic weight vector with every weight 0 except those given (powers default to 1)."""
    values = {p.name: 0.0 for p in CLASSIC.params}
    values.update(monotonicity_power=1.0, sum_power=1.0)
    values.update(weights)
    return CLASSIC.vector(values)


def single_row_board(line) -> list[list[int]]:
    """The line of tile values in row 0, other rows empty, as ranks.

    Every column then holds at most one tile, which has no merges and no monotonicity penalty.
    """
    ranks = [[0] * 4 for _ in range(4)]
    ranks[0] = [v.bit_length() - 1 if v else 0 for v in line]
    return ranks


@pytest.mark.parametrize(
    ("line", "merges"),
    [
        ([2, 2, 2, 2], 4),  # one run of four counts 4
        ([2, 2, 4, 4], 4),  # two runs of two: 2 + 2
        ([2, 2, 2, 4], 3),  # a run of three
        ([4, 2, 2, 0], 2),
        ([2, 0, 2, 0], 2),  # empties are skipped: 2 _ 2 is a run
        ([2, 0, 0, 2], 2),
        ([2, 4, 2, 4], 0),  # no two equal neighbours
        ([2, 4, 4, 2], 2),
        ([8, 8, 0, 8], 3),
        ([0, 0, 0, 0], 0),
        ([0, 0, 0, 2], 0),  # a lone tile is no run
    ],
)
def test_classic_merges_count(line, merges):
    weights = classic_only(merges_weight=1.0)
    ranks = single_row_board(line)
    assert CLASSIC.reference(ranks, weights) == merges
    assert raw_value(raw_workspace(CLASSIC, weights), ranks_to_board(ranks)) == merges


def test_classic_monotonicity_is_the_smaller_of_the_two_directions():
    # row 0 ranks [1, 3, 2, 0], p = 4: 1 -> 3 rises by 3^4 - 1^4 = 80;
    # 3 -> 2 falls by 81 - 16 = 65 and 2 -> 0 falls by 16, so 81 in all; min(81, 80) = 80.
    # Each column holds one tile at the top: it only falls, so it costs min(r^4, 0) = 0.
    weights = classic_only(monotonicity_weight=1.0, monotonicity_power=4.0)
    ranks = single_row_board([2, 8, 4, 0])
    assert CLASSIC.reference(ranks, weights) == -80
    assert raw_value(raw_workspace(CLASSIC, weights), ranks_to_board(ranks)) == pytest.approx(-80)


def test_classic_sum_term_counts_rows_and_columns():
    # ranks 1, 3, 2 with sum_power 2: 1 + 9 + 4 = 14 along row 0, and the same tiles again in
    # their columns: 28 in all
    weights = classic_only(sum_weight=1.0, sum_power=2.0)
    ranks = single_row_board([2, 8, 4, 0])
    assert CLASSIC.reference(ranks, weights) == -28
    assert raw_value(raw_workspace(CLASSIC, weights), ranks_to_board(ranks)) == pytest.approx(-28)


def test_classic_reference_weights_on_a_lone_2():
    # A lone 2 at (0, 0). Row 0 and column 0 read [1, 0, 0, 0]: 3 empties, no merges,
    # monotonicity min(1^4 - 0, 0) = 0, sum 1^3.5 = 1 -> 200000 + 270 * 3 - 11 * 1 = 200799.
    # The other six lines are empty: 200000 + 270 * 4 = 201080.
    # Total 2 * 200799 + 6 * 201080 = 1608078.
    board = parse_board([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert Solver("classic", depth=0).evaluate(board) == pytest.approx(1608078, rel=1e-12)


# --- snake -----------------------------------------------------------------------------------


def test_snake_path_is_boustrophedon_from_the_top_left():
    order = [[path_index(r, c) for c in range(4)] for r in range(4)]
    assert order == [[0, 1, 2, 3], [7, 6, 5, 4], [8, 9, 10, 11], [15, 14, 13, 12]]


def snake_weights(**weights) -> np.ndarray:
    return SNAKE.vector({**SNAKE.defaults(), **weights})


def test_snake_no_head_penalty_when_the_head_is_the_max_tile():
    # decay 1/4, power 1: 4 * 1 + 2 * 1/4 = 4.5 (head 4 is the largest tile)
    weights = snake_weights()
    ranks = single_row_board([4, 2, 0, 0])
    assert SNAKE.reference(ranks, weights) == 4.5
    assert raw_value(raw_workspace(SNAKE, weights), ranks_to_board(ranks)) == 4.5
    assert Solver("snake", depth=0).evaluate(ranks_to_board(ranks)) == 4.5  # above the floor


def test_snake_head_penalty_when_the_head_is_not_the_max_tile():
    # 2 * 1 + 4 * 1/4 = 3, minus head_penalty 1 * (4 - 2)^2 = 4: -1
    weights = snake_weights()
    ranks = single_row_board([2, 4, 0, 0])
    assert SNAKE.reference(ranks, weights) == -1.0
    assert raw_value(raw_workspace(SNAKE, weights), ranks_to_board(ranks)) == -1.0
    # with penalty 3: 3 - 3 * 4 = -9
    weights = snake_weights(head_penalty=3.0)
    assert raw_value(raw_workspace(SNAKE, weights), ranks_to_board(ranks)) == -9.0


def test_snake_head_tied_with_the_max_is_not_penalised():
    # head 4 and another 4 at path index 7 (row 1, col 0): 4 + 4 / 4^7, no penalty
    weights = snake_weights()
    ranks = [[2, 0, 0, 0], [2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    expected = 4 + 4 / 4**7
    assert SNAKE.reference(ranks, weights) == pytest.approx(expected, rel=1e-15)
    assert raw_value(raw_workspace(SNAKE, weights), ranks_to_board(ranks)) == pytest.approx(
        expected, rel=1e-15
    )


def test_snake_tile_power_and_empty_weight():
    # tile_power 2: v(4) = 16, v(2) = 4; decay 0.5: 16 + 4 * 0.5 = 18;
    # 14 empty cells at 0.25 each: + 3.5 -> 21.5
    weights = snake_weights(tile_power=2.0, decay=0.5, empty_weight=0.25)
    ranks = single_row_board([4, 2, 0, 0])
    assert SNAKE.reference(ranks, weights) == pytest.approx(21.5)
    assert raw_value(raw_workspace(SNAKE, weights), ranks_to_board(ranks)) == pytest.approx(21.5)


# --- features --------------------------------------------------------------------------------

# Tiles:            Ranks:
#   8  2  2  .       3 1 1 0
#   .  4  .  .       0 2 0 0
#   .  .  .  .       0 0 0 0
#   .  .  .  2       0 0 0 1
FEATURE_BOARD = [[3, 1, 1, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]]

FEATURE_EXPECTED = {
    # 16 cells - 5 tiles
    "empty": 11.0,
    # (0,1)-(0,2) is the only adjacent equal pair (2 and 2)
    "pairs": 1.0,
    # min(rise, fall) per line, empty = 0: row 1 [0,2,0,0] rises 2 and falls 2 -> 2;
    # column 1 [1,2,0,0] rises 1 and falls 2 -> 1; every other line is monotone -> -(2 + 1)
    "monotonicity": -3.0,
    # |rank gaps| of non-empty neighbours: (0,0)-(0,1) |3-1| = 2, (0,1)-(0,2) 0,
    # (0,1)-(1,1) |1-2| = 1 -> -(2 + 0 + 1)
    "smoothness": -3.0,
    # 8 + 2 + 2 + 4 + 2
    "sum": 18.0,
    # 64 + 4 + 4 + 16 + 4
    "sum_squares": 92.0,
    # |value gaps| over all 24 neighbour pairs, empty = 0:
    # rows: [8,2,2,0] 6+0+2 = 8, [0,4,0,0] 4+4+0 = 8, [0,0,0,0] 0, [0,0,0,2] 2 -> 18
    # cols: [8,0,0,0] 8, [2,4,0,0] 2+4 = 6, [2,0,0,0] 2, [0,0,0,2] 2 -> 18; total 36
    "unbalance": 36.0,
    # G[0][0]*8 + G[0][1]*2 + G[0][2]*2 + G[1][1]*4 + G[3][3]*2 = 80 + 18 + 16 + 20 + 2
    "gradient": 136.0,
    # path indices (0,0)=0, (0,1)=1, (0,2)=2, (1,1)=6, (3,3)=12:
    # 8 + 2/4 + 2/16 + 4/4^6 + 2/4^12
    "snake": 8 + 0.5 + 0.125 + 4 / 4**6 + 2 / 4**12,
    # 18 / 5 tiles
    "average": 3.6,
    # lines that never rise or never fall: rows 0, 2, 3 and columns 0, 2, 3
    "monotonic_lines": 6.0,
    # the largest rank (3, the 8) sits at the top-left corner
    "corner": 3.0,
}


def test_feature_table_covers_every_feature():
    assert set(FEATURE_EXPECTED) == set(FEATURES.param_names)
    assert GRADIENT == ((10, 9, 8, 7), (9, 5, 4, 3), (8, 4, 2, 2), (7, 3, 2, 1))


@pytest.mark.parametrize("name", list(FEATURE_EXPECTED))
def test_feature_on_a_hand_computed_board(name):
    index = FEATURES.param_names.index(name)
    expected = FEATURE_EXPECTED[name]
    assert FEATURES.feature_values(FEATURE_BOARD)[index] == pytest.approx(expected, rel=1e-15)
    # the compiled tables give the same number with that feature's weight alone set to 1
    one_hot = np.zeros(len(FEATURES.params))
    one_hot[index] = 1.0
    got = raw_value(raw_workspace(FEATURES, one_hot), ranks_to_board(FEATURE_BOARD))
    assert got == pytest.approx(expected, rel=1e-12)


def test_features_corner_and_average_edge_cases():
    names = FEATURES.param_names
    # the 8 is off the corner: corner is 0
    off = FEATURES.feature_values([[1, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert off[names.index("corner")] == 0.0
    # a tie with the max at the corner counts: rank 3
    tie = FEATURES.feature_values([[3, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 3]])
    assert tie[names.index("corner")] == 3.0
    # the empty board: no tiles, average 0, 16 empties, every line monotone
    empty = FEATURES.feature_values([[0] * 4 for _ in range(4)])
    assert empty[names.index("average")] == 0.0
    assert empty[names.index("empty")] == 16.0
    assert empty[names.index("monotonic_lines")] == 8.0
    ws = raw_workspace(FEATURES, FEATURES.vector(FEATURES.defaults()))
    # defaults: empty 1 * 16 + monotonic_lines 0.5 * 8 = 20 (corner: top rank 0 -> 0)
    assert raw_value(ws, 0) == pytest.approx(20.0)


# --- combined --------------------------------------------------------------------------------


def test_combined_with_positional_weights_off_is_classic_exactly():
    rng = np.random.default_rng(12)
    classic_weights = random_weights(CLASSIC, rng)
    off = np.concatenate([classic_weights, [0.0, 0.5, 0.0, 0.0]])
    combined = raw_workspace(COMBINED, off)
    classic = raw_workspace(CLASSIC, classic_weights)
    for i in range(500):
        board = ranks_to_board(random_ranks(rng, (0.2, 0.6, 1.0)[i % 3]))
        assert raw_value(combined, board) == pytest.approx(raw_value(classic, board), rel=1e-12)


def combined_positional(snake_weight=0.0, snake_decay=0.5, gradient_weight=0.0, corner_weight=0.0):
    """Combined weights with the classic part at 0 (powers 1): only positional terms count."""
    values = {p.name: 0.0 for p in CLASSIC.params}
    values.update(monotonicity_power=1.0, sum_power=1.0, snake_weight=snake_weight,
                  snake_decay=snake_decay, gradient_weight=gradient_weight,
                  corner_weight=corner_weight)
    return COMBINED.vector(values)


# FEATURE_BOARD's tiles 8, 2, 2, 4, 2 sit at path indices 0, 1, 2, 6, 12
@pytest.mark.parametrize(
    ("weights", "expected"),
    [
        ({"snake_weight": 2.0}, 2 * (8 + 2 / 2 + 2 / 4 + 4 / 2**6 + 2 / 2**12)),
        ({"gradient_weight": 0.5}, 0.5 * 136.0),  # FEATURE_EXPECTED["gradient"]
        ({"corner_weight": 10.0}, 10.0 * 3),  # the 8 (rank 3) is in the corner
    ],
)
def test_combined_positional_terms_on_a_hand_computed_board(weights, expected):
    vector = combined_positional(**weights)
    board = ranks_to_board(FEATURE_BOARD)
    assert COMBINED.reference(FEATURE_BOARD, vector) == pytest.approx(expected, rel=1e-12)
    assert raw_value(raw_workspace(COMBINED, vector), board) == pytest.approx(expected, rel=1e-12)


def test_combined_prefers_the_top_tile_in_its_corner():
    # the same tiles mirrored: the 64 in the top-left corner or in the top-right one; classic
    # scores them the same, every positional term prefers the corner
    left = parse_board([[64, 8, 2, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    right = parse_board([[0, 2, 8, 64], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    classic_weights = CLASSIC.vector(CLASSIC.defaults())
    classic = raw_workspace(CLASSIC, classic_weights)
    assert raw_value(classic, left) == raw_value(classic, right)
    for positional in ([1.0, 0.25, 0.0, 0.0], [0.0, 0.25, 1.0, 0.0], [0.0, 0.25, 0.0, 100.0]):
        ws = raw_workspace(COMBINED, np.concatenate([classic_weights, positional]))
        assert raw_value(ws, left) > raw_value(ws, right), positional


# --- ranked ----------------------------------------------------------------------------------


def ranked_weights(classic_weights, **changes) -> np.ndarray:
    """Ranked weights: these classic weights, neutral extras (knots 0, edge factors 1), changes."""
    values = {**RANKED.defaults(), **CLASSIC.named(classic_weights), **changes}
    return RANKED.vector(values)


def test_ranked_at_its_neutral_extras_is_classic_table_for_table():
    rng = np.random.default_rng(35)
    for classic_weights in (CLASSIC.vector(CLASSIC.defaults()), random_weights(CLASSIC, rng)):
        [classic] = CLASSIC.heuristic(classic_weights).terms
        [ranked] = RANKED.heuristic(ranked_weights(classic_weights)).terms
        assert ranked.layout == "per_line"
        for table in ranked.tables:
            assert np.array_equal(table, classic.tables[0])  # bit for bit: the same games


def test_ranked_plays_the_same_games_as_classic_at_its_neutral_extras():
    weights = CLASSIC.vector(CLASSIC.defaults())
    classic = Solver(CLASSIC, weights=CLASSIC.named(weights), depth=1)
    ranked = Solver(RANKED, weights=RANKED.named(ranked_weights(weights)), depth=1)
    ours, theirs = ranked.play(seed=5), classic.play(seed=5)
    assert (ours.score, ours.moves, ours.final_board) == (
        theirs.score, theirs.moves, theirs.final_board)


def test_knot_curve_interpolates_logs_between_odd_ranks():
    knots = [0.0, 2.0, -1.0, 0.0, 0.0, 0.0, 0.0, 4.0]
    curve = knot_curve(knots)
    assert curve[1] == 1.0 and curve[3] == math.exp(2.0) and curve[5] == math.exp(-1.0)
    assert curve[2] == math.exp(1.0) and curve[4] == math.exp(0.5)  # the mean of the two logs
    assert curve[14] == math.exp(2.0) and curve[15] == math.exp(4.0)
    assert curve[0] == curve[1]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        # [2, 2, 0, 8] in the top row: one run of two 2s (rank 1), counted 2 * exp(c(1))
        ({"merges_weight": 1.0, "merges_log_r1": math.log(3.0)}, 2 * 3.0),
        # the edge factor doubles the top row's merges; the columns have no runs
        ({"merges_weight": 1.0, "edge_merges": 2.0}, 2 * 2.0),
        # sum term: ranks 1, 1, 3 with power 1, the 8's factor e**1; each tile is in a row and
        # a column: the top row is an edge (factor 2), columns 0 and 3 are edges, column 1 is not
        ({"sum_weight": 1.0, "sum_log_r3": 1.0, "edge_sum": 2.0},
         -(2 * (1 + 1 + 3 * math.e) + 2 * 1 + 1 * 1 + 2 * 3 * math.e)),
    ],
)
def test_ranked_terms_on_a_hand_computed_board(changes, expected):
    zero = {p.name: 0.0 for p in CLASSIC.params}
    zero.update(monotonicity_power=1.0, sum_power=1.0)
    vector = RANKED.vector({**RANKED.defaults(), **zero, **changes})
    ranks = [[1, 1, 0, 3], [0] * 4, [0] * 4, [0] * 4]
    assert RANKED.reference(ranks, vector) == pytest.approx(expected, rel=1e-12)
    got = raw_value(raw_workspace(RANKED, vector), ranks_to_board(ranks))
    assert got == pytest.approx(expected, rel=1e-12)


def test_ranked_keeps_the_boards_eight_symmetries():
    rng = np.random.default_rng(8)
    weights = random_weights(RANKED, rng)
    ws = raw_workspace(RANKED, weights)
    for _ in range(50):
        grid = np.array(random_ranks(rng, 0.6))
        images = [np.rot90(grid, k) for k in range(4)] + [np.rot90(grid.T, k) for k in range(4)]
        values = [raw_value(ws, ranks_to_board(image.tolist())) for image in images]
        assert values == pytest.approx([values[0]] * 8, rel=1e-12)


def test_ranked_edge_factors_weigh_edge_lines_only():
    # a 2 and a 4 in the middle of the board sit on inner lines only: edge factors do not touch
    # them; moved to a corner they sit on two edge lines, which the factor weighs
    inner = [[0] * 4, [0, 1, 2, 0], [0] * 4, [0] * 4]
    corner = [[1, 2, 0, 0], [0] * 4, [0] * 4, [0] * 4]
    base = CLASSIC.vector(CLASSIC.defaults())
    neutral = raw_workspace(RANKED, ranked_weights(base))
    tilted = raw_workspace(RANKED, ranked_weights(base, edge_sum=3.0, edge_monotonicity=0.5))
    assert raw_value(tilted, ranks_to_board(inner)) == raw_value(neutral, ranks_to_board(inner))
    assert raw_value(tilted, ranks_to_board(corner)) != raw_value(neutral, ranks_to_board(corner))


def test_rank_powers_are_the_c_librarys_on_every_cpu():
    """Per-rank powers come from math.pow, not numpy's CPU-dispatched SIMD power."""
    from engine.families import rank_powers

    for exponent in (0.5, 1.0, 3.5, 4.0, 7.25, 0.0):
        assert rank_powers(exponent).tolist() == [math.pow(r, exponent) for r in range(16)]
    assert rank_powers(-1.0)[0] == math.inf and rank_powers(-1.0)[2] == 0.5
    weights = CLASSIC.vector(CLASSIC.defaults())
    [term] = CLASSIC.heuristic(weights).terms
    line = [15, 9, 0, 5]  # a line whose table entry once differed by an ulp between CPUs
    code = sum(r << (4 * i) for i, r in enumerate(line))
    mono_pow, sum_pow = weights[1], weights[3]
    assert term.tables[0][code] == pytest.approx(line_reference(line, weights), rel=1e-12)
    assert rank_powers(sum_pow)[15] == math.pow(15, sum_pow)
    assert rank_powers(mono_pow)[9] == math.pow(9, mono_pow)
