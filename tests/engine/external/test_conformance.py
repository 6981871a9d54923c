"""engine.external.conformance: the example engine passes every check, and each fault an engine
can have fails the check that looks for it, at the first game and move that shows it; the check
plays where it is told, prices itself first, and finds a game that depends on the games before
it at a search the cheapest one does not show."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.external import Declaration, EngineProcess, GameResult, Param, Search
from engine.external.conformance import (
    Check,
    Price,
    _chi2_upper_tail,
    check_engine,
    default_searches,
    plan,
    replay,
)
from engine.external.protocol import Moved, Spawn

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = [sys.executable, str(ROOT / "examples" / "engines" / "python_engine.py")]
BAD = [sys.executable, str(Path(__file__).with_name("bad_engine.py"))]
ALL_CHECKS = ["handshake", "games", "rules", "spawn tiles", "spawn cells",
              "deterministic across processes", "parameters", "per-game state"]
CHEAPEST = [Search("depth", 0)]


def checks(command: list[str], games: int = 4, **options) -> dict[str, Check]:
    return {check.name: check for check in check_engine(command, games=games, **options)
            if isinstance(check, Check)}


@pytest.mark.subprocess
def test_the_example_engine_passes_every_check():
    said = list(check_engine(EXAMPLE, games=4))
    found = {check.name: check for check in said if isinstance(check, Check)}
    assert list(found) == ALL_CHECKS
    assert all(check.passed for check in found.values()), found
    [price] = [check for check in said if isinstance(check, Price)]
    assert said.index(price) == 1  # after the handshake, before the games
    # 1 timed a search; 4 + 1 + 4 at depth:0; 2 x 4 a parameter; 4 again, and 2 at depth:1
    assert price.games == 2 + 9 + 3 * 8 + 4 + 2
    assert "per-game state at depth:0, depth:1" in price.detail
    assert found["per-game state"].detail.endswith("4 at depth:0, one at each of depth:1")


@pytest.mark.parametrize(("fault", "failed", "said"), [
    ("silent", ["handshake"], "exited with status 0"),
    ("crash", ["games"], "its last stderr lines: bad_engine: out of memory"),
    ("not-deterministic", ["per-game state"], ("seed 1 at depth:0: score ",
                                               "after other games and values: a game must")),
    ("chained-merges", ["rules"], ("game with seed 1: move 9 (left) on 0000100022001121: the "
                                   "engine's board is 0000100030003100, the rules give "
                                   "0000100030002210")),
    ("many-fours", ["spawn tiles"], "4s in "),
    ("first-empty-cell", ["spawn cells"], "p = 0 for uniform"),
    ("idle-parameter", ["parameters"], ("changing none of 4 games: unused_weight (at 0 and 2, "
                                        "depth:0); a parameter that acts only at other searches "
                                        "says where in its declaration (acts=SEARCH)")),
    ("small-seeds", ["games"], ("seed 18446744073709551615 (2^64 - 1; validation games have "
                                "seeds from 2^63 up): engine ")),
    # acts=auto not said: as before the field, checked at the cheapest search, where it is idle
    ("auto-parameter", ["parameters"], "corner_weight (at 0 and 1000, depth:0)"),
])
@pytest.mark.subprocess
def test_each_fault_fails_its_check_and_no_other(fault, failed, said):
    found = checks([*BAD, fault], timeout=5, searches=CHEAPEST)
    assert [name for name, check in found.items() if not check.passed] == failed
    for part in [said] if isinstance(said, str) else said:
        assert part in found[failed[0]].detail


@pytest.mark.subprocess
def test_a_game_that_depends_on_the_games_before_is_caught_where_it_does():
    """A table of values carried from game to game, used at depth 1 only: every check passes at
    depth:0, the cheapest; checked where the engine declares (depth:0 and depth:1), per-game
    state fails at depth:1, where a game played after the same one at other values is not the
    game a second process played, and nothing else fails."""
    engine = [*BAD, "carried-cache"]
    assert all(check.passed for check in checks(engine, searches=CHEAPEST).values())
    found = checks(engine)
    assert [name for name, check in found.items() if not check.passed] == ["per-game state"]
    assert found["per-game state"].detail.startswith("seed 1 at depth:1: score ")
    assert "in a second process, " in found["per-game state"].detail
    assert ("here, after it was played at other values: a game must depend only on its seed, "
            "the values and the search: clear caches and carried state before each game") in (
        found["per-game state"].detail)


@pytest.mark.subprocess
def test_a_parameter_is_checked_where_it_says_it_acts():
    """A weight only auto uses, declared with acts=auto: checked there (against auto's games at
    its defaults), it passes; auto is then checked for per-game state too."""
    found = checks([*BAD, "auto-parameter-acts"], searches=CHEAPEST)
    assert all(check.passed for check in found.values()), found
    assert found["parameters"].detail == ("each of the 4 changes play (4 games at two values "
                                          "away from its default, at auto, depth:0)")
    assert found["per-game state"].detail.endswith("one at each of auto")


@pytest.mark.subprocess
def test_the_parameters_checked_can_be_chosen_and_an_unknown_one_is_refused():
    found = checks(EXAMPLE, searches=CHEAPEST, params=["merges_weight"])
    assert found["parameters"].detail.startswith("each of the 1 checked (of 3) changes play")
    with pytest.raises(BadInput, match=r"--params: engine '.*' declares no parameter named "
                                       r"'merge_weight' \(it declares empty_weight, "
                                       r"merges_weight, monotonicity_weight\)"):
        checks(EXAMPLE, params=["merge_weight"])
    with pytest.raises(BadInput, match=r"it does not search at auto \(it declares depth:0 to "
                                       r"depth:2\)"):
        checks(EXAMPLE, searches=[Search("depth", 0), Search("auto")])


def declaration(depths=(0, 4), auto=True, nodes=False, params=()) -> Declaration:
    return Declaration("x", 1, tuple(params), depths, auto, nodes)


def test_by_default_the_check_plays_the_cheapest_search_then_one_of_each_kind():
    assert default_searches(declaration()) == [Search("depth", 0), Search("depth", 1),
                                               Search("auto")]
    assert default_searches(declaration((3, 3), auto=False, nodes=True)) == [
        Search("depth", 3), Search("nodes", 1000)]
    assert default_searches(declaration(None, auto=True, nodes=True)) == [Search("auto"),
                                                                          Search("nodes", 1000)]


def test_the_price_counts_every_game_and_times_each_search_once():
    params = [Param("a", "float", 1.0), Param("b", "float", 1.0, acts=Search("depth", 3)),
              Param("c", "int", 2, 0, 5)]
    planned = plan(declaration(params=params), "x", games=20)
    # where a parameter acts is checked for per-game state too
    assert planned.searches == (Search("depth", 0), Search("depth", 1), Search("auto"),
                                Search("depth", 3))
    seconds = {Search("depth", 0): 0.1, Search("depth", 1): 1.0, Search("auto"): 2.0,
               Search("depth", 3): 10.0}
    price = planned.price(seconds)
    # 4 timed; 41 at depth:0 in two processes; 16 a parameter and 8 at depth:3's defaults;
    # 20 again at depth:0 and 2 at each other search
    assert price.games == 4 + 41 + (3 * 16 + 8) + (20 + 3 * 2)
    assert math.isclose(price.seconds, 41 * 0.1 + (32 * 0.1 + 24 * 10.0) + (
        20 * 0.1 + 2 * (1.0 + 2.0 + 10.0)))
    assert price.detail.startswith(
        "127 games, about 0:04:35 more: 41 at depth:0 in two processes, 56 for 3 parameters (16 "
        "each; --params NAME,... checks fewer), 26 for per-game state at depth:0, depth:1, "
        "auto, depth:3; from one game timed at each search (depth:0 0.1 s, depth:1 1 s, auto "
        "2 s, depth:3 10 s)")
    chosen = plan(declaration(params=params), "x", games=2, params=["c", "c"],
                  searches=[Search("auto")])
    assert chosen.params == (params[2],) and chosen.searches == (Search("auto"),)
    assert chosen.price({Search("auto"): 1.0}).detail.startswith(
        "12 games, about 11 s more: 5 at auto in two processes, 4 for 1 of the 3 parameters (4 "
        "each)")
@pytest.mark.subprocess
def test_too_few_spawns_are_not_judged_and_say_how_to_get_more():
    few = checks(EXAMPLE, games=1, searches=CHEAPEST)
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
