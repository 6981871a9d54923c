"""engine.external.conformance: the example engine passes every check, and each fault an engine
can have fails the check that looks for it, at the first game and move that shows it."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from engine.external import EngineProcess, GameResult, Search
from engine.external.conformance import _chi2_upper_tail, check_engine, replay
from engine.external.protocol import Moved, Spawn

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = [sys.executable, str(ROOT / "examples" / "engines" / "python_engine.py")]
BAD = [sys.executable, str(Path(__file__).with_name("bad_engine.py"))]
ALL_CHECKS = ["handshake", "games", "rules", "spawn tiles", "spawn cells", "deterministic",
              "deterministic across processes", "parameters"]


def checks(command: list[str], **options) -> dict:
    return {check.name: check for check in check_engine(command, games=4, **options)}


@pytest.mark.subprocess
def test_the_example_engine_passes_every_check():
    found = checks(EXAMPLE)
    assert list(found) == ALL_CHECKS
    assert all(check.passed for check in found.values()), found


@pytest.mark.parametrize(("fault", "failed", "said"), [
    ("silent", "handshake", "exited with status 0"),
    ("crash", "games", "its last stderr lines: bad_engine: out of memory"),
    ("not-deterministic", "deterministic", "seed 1: score "),
    ("chained-merges", "rules", ("game with seed 1: move 9 (left) on 0000100022001121: the "
                                 "engine's board is 0000100030003100, the rules give "
                                 "0000100030002210")),
    ("many-fours", "spawn tiles", "4s in "),
    ("first-empty-cell", "spawn cells", "p = 0 for uniform"),
    ("idle-parameter", "parameters", "changing none of 4 games: unused_weight (at 0 and 2)"),
    ("small-seeds", "games", ("seed 18446744073709551615 (2^64 - 1; validation games have seeds "
                              "from 2^63 up): engine ")),
])
@pytest.mark.subprocess
def test_each_fault_fails_its_check_and_no_other(fault, failed, said):
    found = checks([*BAD, fault], timeout=5)
    assert [name for name, check in found.items() if not check.passed] == [failed]
    assert said in found[failed].detail


@pytest.mark.subprocess
def test_too_few_spawns_are_not_judged_and_say_how_to_get_more():
    few = {check.name: check for check in check_engine(EXAMPLE, games=1)}
    assert not few["spawn tiles"].passed and not few["spawn cells"].passed
    assert "fewer than the 1,000 that can judge them: check again with more --games" in (
        few["spawn cells"].detail)
    assert all(check.passed for name, check in few.items() if not name.startswith("spawn"))


# A game by hand: 2s on cells 0 and 1; left merges them (4 points); a 2 spawns on cell 2...
def test_a_transcript_is_replayed_by_the_rules_to_its_first_fault():
    steps = [Spawn(0, 2), Spawn(1, 2), Moved("left", (2,) + (0,) * 15), Spawn(5, 4)]
    fault, spawns = replay(steps, GameResult(1, 4, 4, 1))
    assert fault == "after move 1: the game ends with a legal move left"
    assert spawns == [(16, 0, 2), (15, 0, 2), (15, 4, 4)]
    cases = {
        "after move 0: a spawn on cell 0, which holds a tile": [Spawn(0, 2), Spawn(0, 2)],
        "move 1 (up): illegal, it changes nothing": [Spawn(0, 2), Spawn(1, 2), Moved("up", None)],
        "move 1: a move where a spawn was due": [Spawn(0, 2), Moved("left", None)],
        "after move 0: a spawn where a move was due": [Spawn(0, 2), Spawn(1, 2), Spawn(2, 2)],
        "after move 1: the game ends before its spawn": [Spawn(0, 2), Spawn(1, 2),
                                                         Moved("left", None)],
    }
    for said, steps in cases.items():
        assert replay(steps, GameResult(1, 0, 2, 0))[0].startswith(said), said


@pytest.mark.subprocess
def test_a_full_game_whose_result_line_lies_is_caught():
    with EngineProcess(EXAMPLE) as engine:
        [(game, steps)] = engine.play(Search("depth", 0), [1], trace=True)
    assert replay(steps, game)[0] is None
    # the same transcript, with a result line that adds 4 points
    lying = GameResult(game.seed, game.score + 4, game.tile, game.moves)
    assert replay(steps, lying)[0].startswith(f"its result says score {game.score + 4:,}")


def test_the_chi_squared_tail_is_close_to_its_tables():
    # the upper 1% and 0.05% points of chi-squared at 10 and 60 degrees of freedom
    for chi2, df, p in ((23.209, 10, 0.01), (88.379, 60, 0.01), (31.42, 10, 0.0005)):
        assert math.isclose(_chi2_upper_tail(chi2, df), p, rel_tol=0.2)
