"""The expectimax search: golden values, a plain-Python reference, depth and floor semantics."""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from engine import kernels
from engine.board import board_to_ranks, parse_board, ranks_to_board
from engine.families import FAMILIES
from engine.families.classic import CLASSIC
from engine.rules import Move, apply_move, legal_moves
from engine.solver import Solver
from engine.weights_file import read_weights

REPO_ROOT = Path(__file__).resolve().parents[2]
EXPECTIMAX_TSV = REPO_ROOT / "tests" / "data" / "expectimax-classic.tsv"
CLASSIC_REFERENCE = REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml"

# classic with no per-line constant and a heavy tile-sum penalty: every real board scores < 0
NEGATIVE_CLASSIC = {
    "lost_penalty": 0.0,
    "monotonicity_power": 4.0,
    "monotonicity_weight": 47.0,
    "sum_power": 3.5,
    "sum_weight": 1000.0,
    "merges_weight": 700.0,
    "empty_weight": 270.0,
}


def read_expectimax_tsv():
    rows = []
    for line in EXPECTIMAX_TSV.read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        board, depth, up, down, left, right, best = line.split("\t")
        values = [float(v) for v in (up, down, left, right)]
        rows.append((int(board, 16), int(depth), values, best))
    return rows


# --- golden values ---------------------------------------------------------------------------


def test_golden_file_covers_depths_0_to_3():
    rows = read_expectimax_tsv()
    assert len(rows) == 480
    assert sorted({depth for _, depth, _, _ in rows}) == [0, 1, 2, 3]


def test_the_reference_weights_file_holds_the_classic_defaults():
    loaded = read_weights(CLASSIC_REFERENCE)
    assert loaded.family == "classic"
    assert loaded.weights == CLASSIC.defaults()


@pytest.mark.parametrize("transposition", [False, True], ids=["tt-off", "tt-on"])
def test_golden_expectimax_values_and_best_moves(transposition):
    weights = read_weights(CLASSIC_REFERENCE).weights
    solvers = {
        d: Solver("classic", weights, depth=d, cutoff=0.0, transposition=transposition)
        for d in range(4)
    }
    mismatches = []
    for board, depth, expected, best in read_expectimax_tsv():
        solver = solvers[depth]
        values = solver.move_values(board)
        for move, want in zip(Move, expected, strict=True):
            got = values[move]
            if want == -1:
                ok = got is None
            else:
                ok = got is not None and math.isclose(got, want, rel_tol=1e-5)
            if not ok:
                mismatches.append((f"{board:016x}", depth, str(move), got, want))
        if str(solver.best_move(board)) != best:
            mismatches.append((f"{board:016x}", depth, "best", solver.best_move(board), best))
    assert mismatches == []


def test_transposition_table_changes_no_value_without_a_cutoff():
    off = {d: Solver("classic", depth=d, cutoff=0.0, transposition=False) for d in range(4)}
    on = {d: Solver("classic", depth=d, cutoff=0.0, transposition=True) for d in range(4)}
    differences = []
    for board, depth, _, _ in read_expectimax_tsv():
        a, b = off[depth].move_values(board), on[depth].move_values(board)
        if a != b:  # exact equality
            differences.append((f"{board:016x}", depth, a, b))
    assert differences == []


def test_the_transposition_table_saves_work():
    board = read_expectimax_tsv()[0][0]
    counts = []
    for transposition in (False, True):
        solver = Solver("classic", depth=3, cutoff=0.0, transposition=transposition)
        solver._ws[kernels.WS_MOVES] = 0.0
        solver.move_values(board)
        counts.append(solver._ws[kernels.WS_MOVES])
    assert counts[1] < counts[0]


# --- plain-Python reference search -----------------------------------------------------------


class ReferenceSearch:
    """Fixed-depth expectimax written the obvious way, on the family's ``reference`` heuristic."""

    def __init__(self, solver: Solver):
        self.family = solver.family
        self.weights = self.family.vector(solver.weights)
        self.tau = float(solver._ws[kernels.WS_FLOOR])
        self.leaves: dict[int, float] = {}

    def leaf(self, board: int) -> float:
        if board not in self.leaves:
            h = self.family.reference(board_to_ranks(board), self.weights)
            tau = self.tau
            self.leaves[board] = h if h >= tau else tau * tau / (2 * tau - h)
        return self.leaves[board]

    def max_node(self, board: int, depth: int) -> float:
        """Best over legal moves; a board with no legal move is worth 0."""
        best = 0.0
        for move in Move:
            moved, _ = apply_move(board, move)
            if moved != board:
                best = max(best, self.chance(moved, depth))
        return best

    def chance(self, board: int, depth: int) -> float:
        if depth == 0:
            return self.leaf(board)
        empty = [i for i in range(16) if not (board >> (4 * i)) & 0xF]
        total = 0.0
        for cell in empty:
            for rank, p in ((1, 0.9), (2, 0.1)):
                total += p * self.max_node(board | (rank << (4 * cell)), depth - 1)
        return total / len(empty)

    def move_values(self, board: int, depth: int) -> dict[Move, float | None]:
        values: dict[Move, float | None] = {}
        for move in Move:
            moved, _ = apply_move(board, move)
            values[move] = None if moved == board else self.chance(moved, depth)
        return values


SEARCH_BOARDS = {
    "opening": [[2, 0, 0, 2], [0, 4, 0, 0], [0, 0, 0, 0], [0, 0, 0, 8]],
    "middle": [[2, 8, 32, 4], [0, 4, 16, 2], [0, 2, 0, 8], [0, 0, 0, 2]],
    "late": [[2, 4, 8, 16], [256, 128, 64, 32], [512, 1024, 2048, 4], [0, 2, 0, 8]],
    "crowded": [[1024, 512, 256, 128], [8, 16, 32, 64], [4, 2, 8, 4], [2, 0, 2, 0]],
    "one-empty": [[4, 8, 2, 4], [2, 16, 4, 2], [8, 2, 32, 8], [16, 4, 2, 0]],
}


def assert_values_close(got, expected, context):
    assert got.keys() == expected.keys()
    for move in Move:
        if expected[move] is None:
            assert got[move] is None, (context, move)
        else:
            assert got[move] == pytest.approx(expected[move], rel=1e-9, abs=1e-300), (
                context,
                move,
            )


@pytest.mark.parametrize("family", list(FAMILIES), ids=list(FAMILIES))
@pytest.mark.parametrize("depth", [0, 1, 2])
def test_search_matches_plain_python_expectimax(family, depth):
    for transposition in (False, True):
        solver = Solver(family, depth=depth, cutoff=0.0, transposition=transposition)
        reference = ReferenceSearch(solver)
        for name, grid in SEARCH_BOARDS.items():
            board = parse_board(grid)
            expected = reference.move_values(board, depth)
            assert_values_close(solver.move_values(board), expected, (name, transposition))
            best = solver.best_move(board)
            top = max(v for v in expected.values() if v is not None)
            assert expected[best] == pytest.approx(top, rel=1e-9)


@pytest.mark.parametrize("depth", [1, 2])
def test_search_matches_reference_with_negative_heuristics(depth):
    solver = Solver("classic", NEGATIVE_CLASSIC, depth=depth, cutoff=0.0)
    reference = ReferenceSearch(solver)
    for name, grid in SEARCH_BOARDS.items():
        board = parse_board(grid)
        assert_values_close(solver.move_values(board), reference.move_values(board, depth), name)


@pytest.mark.parametrize("family", list(FAMILIES), ids=list(FAMILIES))
def test_depth_0_is_the_heuristic_right_after_the_move(family):
    solver = Solver(family, depth=0, cutoff=0.0)
    for grid in SEARCH_BOARDS.values():
        board = parse_board(grid)
        values = solver.move_values(board)
        for move in Move:
            moved, _ = apply_move(board, move)
            if moved == board:
                assert values[move] is None
            else:
                assert values[move] == solver.evaluate(moved)


def test_ties_go_to_the_first_move_in_up_down_left_right_order():
    # features with weights that are small binary fractions, and no corner, gradient or snake
    # term: every value is exact and mirror symmetric, so left and right tie exactly
    weights = {name: 0.0 for name in FAMILIES["features"].param_names}
    weights.update(empty=1.0, pairs=1.0, monotonicity=1.0, smoothness=0.5, monotonic_lines=0.5)
    solver = Solver("features", weights, depth=0)
    board = parse_board([[2, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    values = solver.move_values(board)
    assert values[Move.UP] is None
    assert values[Move.LEFT] == values[Move.RIGHT] > values[Move.DOWN]
    assert solver.best_move(board) == Move.LEFT
    # and mirrored top to bottom: up and down tie, up comes first
    board = parse_board([[2, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [2, 0, 0, 0]])
    values = solver.move_values(board)
    assert values[Move.UP] == values[Move.DOWN] > values[Move.RIGHT]
    assert solver.best_move(board) == Move.UP


@pytest.mark.parametrize("family", list(FAMILIES), ids=list(FAMILIES))
def test_with_a_cutoff_the_chosen_move_is_legal(family):
    rng = np.random.default_rng(5)
    solver = Solver(family, depth=2, cutoff=1e-4)
    for _ in range(40):
        ranks = rng.integers(1, 12, size=(4, 4))
        ranks[rng.random((4, 4)) < rng.uniform(0.05, 0.8)] = 0
        board = ranks_to_board(ranks.tolist())
        legal = legal_moves(board)
        best = solver.best_move(board)
        if legal:
            assert best in legal
            values = solver.move_values(board)
            assert {m for m in Move if values[m] is not None} == set(legal)
        else:
            assert best is None


# --- dead boards and negative heuristics -----------------------------------------------------


def test_a_live_board_is_worth_more_than_a_dead_one_even_with_negative_heuristics():
    solver = Solver("classic", NEGATIVE_CLASSIC, depth=0)
    weights = CLASSIC.vector(NEGATIVE_CLASSIC)
    board = parse_board([[2, 8, 32, 4], [0, 4, 16, 2], [0, 2, 0, 8], [0, 0, 0, 2]])
    assert CLASSIC.reference(board_to_ranks(board), weights) < 0  # the raw heuristic
    assert solver.evaluate(board) > 0  # a dead board is worth 0 inside the search


@pytest.mark.parametrize("family", ["classic", "features"])
def test_a_live_board_is_worth_more_than_a_dead_one_with_all_zero_weights(family):
    # all-zero weights lie inside every range of features (and of classic, powers aside)
    weights = {p.name: 0.0 if p.low <= 0.0 else p.default for p in FAMILIES[family].params}
    solver = Solver(family, weights, depth=1, cutoff=0.0)
    board = parse_board([[2, 8, 32, 4], [0, 4, 16, 2], [0, 2, 0, 8], [0, 0, 0, 2]])
    assert solver.evaluate(board) > 0
    assert all(v > 0 for v in solver.move_values(board).values() if v is not None)


def test_the_floor_squash_keeps_the_order_of_boards():
    solver = Solver("classic", NEGATIVE_CLASSIC, depth=0)
    weights = CLASSIC.vector(NEGATIVE_CLASSIC)
    tau = solver._ws[kernels.WS_FLOOR]
    rng = np.random.default_rng(3)
    pairs = []
    for _ in range(400):
        ranks = rng.integers(0, 12, size=(4, 4)).tolist()
        h = CLASSIC.reference(ranks, weights)
        pairs.append((h, solver.evaluate(ranks_to_board(ranks))))
    pairs.sort()
    assert all(h < tau for h, _ in pairs)
    raw = [h for h, _ in pairs]
    squashed = [v for _, v in pairs]
    assert all(v > 0 for v in squashed)
    for (h1, v1), (h2, v2) in itertools.pairwise(pairs):
        if h1 < h2:
            assert v1 < v2, (h1, h2, v1, v2)
    assert len(set(raw)) > 300  # the boards really differ


def test_search_prefers_a_move_that_survives_over_one_that_dies():
    # Right packs row 3 to [0, 16, 4, 64]; whatever then spawns at (3, 0), no move is legal.
    # Up and down keep the game alive. All raw heuristics here are negative, so a search that
    # scored a dead board 0 against raw leaves would prefer to die.
    board = parse_board([[32, 8, 256, 2], [128, 64, 8, 64], [16, 128, 256, 8], [16, 4, 64, 0]])
    right, _ = apply_move(board, Move.RIGHT)
    for spawned in (right | (1 << 48), right | (2 << 48)):
        assert legal_moves(spawned) == []
    weights = CLASSIC.vector(NEGATIVE_CLASSIC)
    for move in (Move.UP, Move.DOWN):
        moved, _ = apply_move(board, move)
        assert CLASSIC.reference(board_to_ranks(moved), weights) < 0
    solver = Solver("classic", NEGATIVE_CLASSIC, depth=1, cutoff=0.0)
    values = solver.move_values(board)
    assert values[Move.RIGHT] == 0.0
    assert values[Move.LEFT] is None
    assert values[Move.UP] > 0 and values[Move.DOWN] > 0
    assert solver.best_move(board) in (Move.UP, Move.DOWN)


def test_a_game_with_negative_heuristics_plays_until_no_move_is_legal():
    for depth in (0, 1):
        result = Solver("classic", NEGATIVE_CLASSIC, depth=depth).play(seed=8)
        assert result.moves > 50
        assert legal_moves(result.final_board) == []


@pytest.mark.parametrize("family", list(FAMILIES), ids=list(FAMILIES))
def test_the_root_plays_a_legal_move_whenever_one_exists(family):
    rng = np.random.default_rng(13)
    solvers = [Solver(family, depth=1, cutoff=0.0), Solver(family, depth=0)]
    if family == "classic":
        solvers.append(Solver("classic", NEGATIVE_CLASSIC, depth=1, cutoff=0.0))
    seen_dead = 0
    for i in range(150):
        # full or nearly full boards of varied tiles: many are dead or one move from it
        ranks = rng.integers(1, 16, size=(4, 4))
        if i % 2:
            ranks[rng.random((4, 4)) < 0.1] = 0
        board = ranks_to_board(ranks.tolist())
        legal = legal_moves(board)
        seen_dead += not legal
        for solver in solvers:
            best = solver.best_move(board)
            assert (best in legal) if legal else (best is None)
    assert seen_dead > 0
