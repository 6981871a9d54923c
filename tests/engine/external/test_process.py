"""engine.external.process: an engine process greeted, asked for games and ended; each way an
engine fails is one line naming the engine, the request and its last words on stderr."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.errors import BadInput
from engine.external import EngineFailure, EngineProcess, Search

pytestmark = pytest.mark.subprocess  # each test starts an engine

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = [sys.executable, str(ROOT / "examples" / "engines" / "python_engine.py")]


def bad(fault: str) -> list[str]:
    return [sys.executable, str(Path(__file__).with_name("bad_engine.py")), fault]


def test_the_example_engine_declares_itself_and_plays_seeded_games():
    with EngineProcess(EXAMPLE) as engine:
        assert engine.declaration.name == "python-example 1.0"
        assert [p.name for p in engine.declaration.params] == [
            "empty_weight", "merges_weight", "monotonicity_weight"]
        games = [game for game, steps in engine.play(Search("depth", 0), [3, 4])]
        assert [game.seed for game in games] == [3, 4]
        assert all(game.score > 0 and game.moves > 0 and game.positions > 0 for game in games)
        again = [game for game, _ in engine.play(Search("depth", 0), [4])]
        assert again == games[1:]
        engine.set_values({"merges_weight": 10.0})
        moved = [game for game, _ in engine.play(Search("depth", 0), [3, 4])]
        assert moved != games
        [(game, steps)] = engine.play(Search("depth", 0), [3], trace=True)
        assert game == moved[0] and len(steps) == 2 + 2 * game.moves
    assert engine._process.poll() == 0  # asked to quit, it did


def test_what_an_engine_does_not_declare_is_refused_before_it_is_asked():
    with EngineProcess(EXAMPLE) as engine:
        with pytest.raises(BadInput, match="no parameter named 'merge_weight' .it declares "
                                            "empty_weight, merges_weight, monotonicity_weight"):
            engine.set_values({"merge_weight": 1.0})
        with pytest.raises(BadInput, match="does not search at depth:3 .it declares depth:0 "
                                            "to depth:2"):
            list(engine.play(Search("depth", 3), [1]))


def test_a_command_that_cannot_start_is_bad_input():
    with pytest.raises(BadInput, match="engine 'no-such-engine --fast': cannot start it: No "
                                       "such file or directory"):
        EngineProcess(["no-such-engine", "--fast"])
    with pytest.raises(BadInput, match="no command"):
        EngineProcess([])


@pytest.mark.parametrize(("fault", "said"), [
    ("silent", "exited with status 0 (request: 'tune2048 1')"),
    ("version-2", "handshake: the engine speaks protocol 2; tune2048 speaks 1"),
    ("garbage", "expected a 'game' line, got 'GAME OVER!' (request: 'play depth:0 1 2')"),
    ("crash", ("exited with status 3 (request: 'play depth:0 1 2'); its last stderr lines: "
               "bad_engine: out of memory, giving up")),
    ("hang", ("did not finish the game with seed 2 within 0.5 s (the game timeout) (request: "
              "'play depth:0 1 2')")),
])
def test_each_way_an_engine_fails_is_one_line(fault, said):
    with pytest.raises(EngineFailure) as raised, \
            EngineProcess(bad(fault), game_timeout=0.5) as engine:
        list(engine.play(Search("depth", 0), [1, 2]))
    message = str(raised.value)
    assert said in message and "\n" not in message
    assert message.startswith(f"engine '{' '.join(bad(fault))}': ")


def test_a_hung_engine_is_ended_with_its_failure_and_asked_nothing_more(tmp_path):
    engine = EngineProcess(bad("hang"), game_timeout=0.2)
    with pytest.raises(EngineFailure) as raised:
        list(engine.play(Search("depth", 0), [1, 2]))
    assert engine._process.poll() is not None  # it reads no 'quit' while it sleeps: ended
    with pytest.raises(EngineFailure) as again:
        engine.set_values({"merges_weight": 1.0})
    assert str(again.value) == str(raised.value)
    engine.close()
