"""Depth policies: fixed, by board (the distinct-tiles rule) and a node budget; their text and
YAML forms, and that the compiled search plays exactly what each promises."""

from __future__ import annotations

import random

import pytest

from engine.board import Board
from engine.depth import (
    FORMS,
    TUNING,
    ByBoard,
    DepthError,
    NodeBudget,
    chosen_depth,
    parse_depth,
    to_yaml,
)
from engine.rules import SpawnStream, apply_move, new_game
from engine.solver import Solver


@pytest.mark.parametrize(
    ("written", "policy"),
    [
        (3, 3),
        ("3", 3),
        ("auto", ByBoard()),
        ("auto:cap=6", ByBoard(cap=6)),
        ("auto:floor=2,offset=3,cap=5", ByBoard(2, 3, 5)),
        ({"auto": None}, ByBoard()),
        ({"auto": {"cap": 6, "floor": 4}}, ByBoard(floor=4, cap=6)),
        ("nodes:200000", NodeBudget(200_000)),
        ("nodes:200_000", NodeBudget(200_000)),
        (" nodes : 2_000 ", NodeBudget(2000)),
        (" auto : cap = 6 , floor = 2 ", ByBoard(floor=2, cap=6)),
        ("+3", 3),
        ("0003", 3),
        ({"nodes": 5000}, NodeBudget(5000)),
        (ByBoard(cap=4), ByBoard(cap=4)),
    ],
)
def test_every_written_form_reads_as_its_policy_and_writes_back(written, policy):
    assert parse_depth(written) == policy
    assert parse_depth(to_yaml(policy)) == policy  # what a config or weights file records


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (9, "expected an integer from 0 to 8, got 9"),
        (-1, "expected an integer from 0 to 8, got -1"),
        ("-1", "expected an integer from 0 to 8, got -1"),
        pytest.param("9" * 5000, "expected an integer from 0 to 8, got an integer of 5,000 digits",
                     id="text of 5000 digits"),
        pytest.param(10**5000, "expected an integer from 0 to 8, got an integer of 5,001 digits",
                     id="int of 5001 digits"),
        (True, f"expected {FORMS}, got True"),
        (2.5, f"expected {FORMS}, got 2.5"),
        ("deep", f"expected {FORMS}, got 'deep'"),
        ("٣", f"expected {FORMS}, got '٣'"),
        ("auto:cap=2", "auto: cap 2 is below the floor 3"),
        ("auto:cap=15", "auto: cap: expected an integer from 1 to 14, got 15"),
        ("auto:depth=4", "auto: unknown setting 'depth' (floor, offset, cap)"),
        ("auto:cap", "auto: expected KEY=INTEGER settings (floor, offset, cap), got 'cap'"),
        ("auto:", "auto: expected KEY=INTEGER settings (floor, offset, cap), got ''"),
        ("auto:cap=6,cap=5", "auto: cap is given twice"),
        ("nodes:-5", "nodes: expected an integer from 1 to 1,000,000,000,000, got -5"),
        ("nodes:_", "nodes: expected an integer from 1 to 1,000,000,000,000, got '_'"),
        pytest.param("nodes:" + "9" * 5000, ("nodes: expected an integer from 1 to "
                                             "1,000,000,000,000, got an integer of 5,000 digits"),
                     id="nodes of 5000 digits"),
        ({"nodes": 0}, "nodes: expected an integer from 1 to 1,000,000,000,000, got 0"),
        ({"nodes": -1}, "nodes: expected an integer from 1 to 1,000,000,000,000, got -1"),
        ({"nodes": 1.5}, "nodes: expected an integer from 1 to 1,000,000,000,000, got 1.5"),
        ({"auto": 3}, "auto: expected a mapping of floor, offset, cap, got 3"),
        ({"auto": {"cap": 6}, "nodes": 9}, ("expected one key, auto or nodes, got ['auto', "
                                            "'nodes']")),
        ({"seconds": 1}, "expected one key, auto or nodes, got ['seconds']"),
    ],
)
def test_a_malformed_policy_says_what_is_wrong(written, message):
    with pytest.raises(DepthError) as info:
        parse_depth(written)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (6, "expected an integer from 0 to 5 in a tuning run, got 6"),
        ("auto:cap=6", ("expected the board rule capped at 5 or less in a tuning run (e.g. "
                       "auto:cap=5; uncapped, a move late in a game searches up to 14 layers: "
                       "minutes), got auto:cap=6")),
        ({"nodes": 20_000_001}, ("expected a node budget of at most 20,000,000 positions a move "
                                "in a tuning run (about a depth-5 move), got 20,000,001")),
    ],
)
def test_a_policy_dearer_than_its_limits_allow_is_refused_by_the_one_rule(written, message):
    assert parse_depth(written) == parse_depth(to_yaml(parse_depth(written)))  # playing: fine
    with pytest.raises(DepthError) as info:
        parse_depth(written, TUNING)
    assert str(info.value) == message
    assert parse_depth("auto:cap=5", TUNING) == ByBoard(cap=5)
    assert parse_depth("nodes:20_000_000", TUNING) == NodeBudget(20_000_000)


def test_the_weights_files_depth_is_searched_unless_one_is_given():
    assert chosen_depth(None, ByBoard(cap=6)) == ByBoard(cap=6)
    assert chosen_depth(0, ByBoard(cap=6)) == 0
    assert chosen_depth("nodes:5000", 3) == "nodes:5000"


def test_the_board_rule_deepens_with_distinct_tiles_between_its_floor_and_cap():
    rule = ByBoard()
    assert [rule.depth_for(n) for n in (1, 5, 6, 9, 16)] == [3, 3, 4, 7, 14]
    assert [ByBoard(cap=5).depth_for(n) for n in (4, 7, 8, 12)] == [3, 5, 5, 5]
    assert ByBoard(floor=1, offset=0).depth_for(2) == 2


def positions(count: int, seed: int = 5) -> list[Board]:
    """Boards from real games, early to late, played by a fast depth-1 search."""
    solver = Solver("classic", depth=1)
    boards = []
    rng = random.Random(seed)
    while len(boards) < count:
        stream = SpawnStream(rng.randrange(1 << 32))
        board = new_game(stream)
        while (move := solver.best_move(board)) is not None:
            if rng.random() < 0.02:
                boards.append(board)
            board = stream.spawn(apply_move(board, move)[0])
    return boards[:count]


def distinct(board: Board) -> int:
    return len({(board >> (4 * i)) & 0xF for i in range(16)} - {0})


def test_the_board_rule_searches_each_position_at_the_depth_it_gives():
    by_board = Solver("classic", depth=ByBoard(floor=1, offset=6, cap=4))
    fixed = {d: Solver("classic", depth=d) for d in range(1, 5)}
    seen = set()
    for board in positions(60):
        depth = ByBoard(floor=1, offset=6, cap=4).depth_for(distinct(board))
        seen.add(depth)
        decision = by_board.decide(board)
        assert decision.depth == depth
        assert decision.values == fixed[depth].move_values(board)
        assert decision.move == fixed[depth].best_move(board)
    assert len(seen) >= 3  # the positions span the rule's depths


def budget_outcome(budget: int, spent: list[int]) -> tuple[int, str]:
    """What a node budget does, replayed from each fixed depth's positions (``spent[d - 1]``):
    the depth that decides, and how the next one ended (budgets here are never within a search
    of its end, where an abandoned and a completed search can end alike)."""
    total, last, before, depth = 0, 0.0, 0.0, 0
    for d in range(1, len(spent) + 1):
        if before > 0 and total + last * (last / before) > budget:
            return depth, "not started"  # predicted not to fit
        if d > 1 and total + spent[d - 1] > budget:
            return depth, "abandoned"
        total += spent[d - 1]
        before, last, depth = last, spent[d - 1], d
        if total >= budget:
            return depth, "budget spent"
    return depth, "deepest"


def test_a_node_budget_plays_the_deepest_depth_that_completed_within_it():
    fixed = {d: Solver("classic", depth=d) for d in range(1, 5)}
    seen = set()
    for board in positions(25, seed=9):
        spent = [fixed[d].decide(board).positions for d in range(1, 5)]
        cumulative = [sum(spent[:d]) for d in range(1, 5)]  # depths 1..d searched in turn
        # exactly what depths 1..d cost, and half-way through depth d + 1 (depth 2 is always
        # started, so abandoned there; deeper ones are mostly predicted not to fit)
        for budget in (cumulative[0], cumulative[1], cumulative[2], cumulative[0] + spent[1] // 2,
                       cumulative[1] + spent[2] // 2, cumulative[2] + spent[3] // 2):
            depth, how = budget_outcome(budget, spent)
            decision = Solver("classic", depth=NodeBudget(budget)).decide(board)
            assert decision.depth == depth, (budget, spent)
            assert decision.values == fixed[depth].move_values(board)
            if how == "abandoned":  # its positions count, up to about the budget
                assert cumulative[depth - 1] < decision.positions < cumulative[depth]
            else:
                assert decision.positions == cumulative[depth - 1]
            seen.add((depth, how))
    assert {how for _, how in seen} >= {"not started", "abandoned", "budget spent"}
    assert {depth for depth, _ in seen} >= {1, 2, 3}


def test_depth_one_always_completes_however_small_the_budget():
    decision = Solver("classic", depth=NodeBudget(1)).decide(positions(1)[0])
    assert decision.depth == 1 and decision.move is not None


@pytest.mark.parametrize("policy", ["auto:cap=4", "nodes:30000"])
def test_a_game_at_a_policy_is_a_pure_function_of_its_seed_and_plays_as_its_decisions(policy):
    def outcome(result):
        return result.score, result.moves, result.moves_evaluated, result.final_board

    solver = Solver("classic", depth=policy)
    whole = outcome(solver.play(11, max_moves=300))
    assert outcome(Solver("classic", depth=policy).play(11, max_moves=300)) == whole
    assert outcome(solver.play(11, max_moves=300, on_move=lambda *_: None)) == whole


def test_a_fixed_depth_plays_as_it_always_did():
    # the same games as before policies existed (seed 7, depth 2: a recorded game)
    result = Solver("classic", depth=2).play(7)
    assert (result.score, result.moves, result.moves_evaluated) == (36956, 1937, 5208272)
    assert repr(Solver("classic", depth="auto:cap=6")) == (
        "Solver('classic', depth='auto:cap=6', cutoff=0.0001)")


def test_the_policy_kinds_are_the_ones_the_compiled_search_reads():
    from engine import depth, kernels

    assert (depth.KIND_FIXED, depth.KIND_BY_BOARD, depth.KIND_NODES) == (
        kernels.KIND_FIXED, kernels.KIND_BY_BOARD, kernels.KIND_NODES)
