"""engine.external.player: an external engine as a player. One process kept for many units,
values sent only when they change, a fresh process after ``games_per_process`` games or a
failure (``EngineLost``); our depth policies as the protocol's searches; weights files played in
the engine they name."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.depth import ByBoard, NodeBudget
from engine.errors import BadInput
from engine.external import player
from engine.external.player import (
    EngineCommand,
    EngineLost,
    EnginePlayer,
    close_kept,
    declaration,
    engine_digest,
    engine_player,
    play_games,
    search_for,
)
from engine.external.protocol import Search
from engine.weights_file import WeightsFile

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = str(ROOT / "examples" / "engines")
EXAMPLE = EngineCommand((sys.executable, "python_engine.py"), EXAMPLES)
BAD = str(Path(__file__).with_name("bad_engine.py"))
NAME = "python-example 1.0"
DEFAULTS = {"empty_weight": 270.0, "merges_weight": 700.0, "monotonicity_weight": 47.0}


@pytest.fixture(autouse=True)
def no_engine_left():
    yield
    close_kept()


def played(games) -> list[tuple]:
    """What a game's seed decides (its seconds are the machine's)."""
    return [(game.seed, game.score, game.max_tile, game.moves, game.moves_evaluated)
            for game in games]


def example(weights=DEFAULTS, engine=EXAMPLE, depth=0) -> EnginePlayer:
    return EnginePlayer(engine, NAME, dict(weights), depth)


@pytest.mark.subprocess
def test_one_process_plays_every_unit_and_hears_only_the_values_that_changed(monkeypatch):
    sent = []
    first = play_games(example(), [1, 2])
    kept = player._kept
    monkeypatch.setattr(kept.process, "set_values", lambda values: sent.append(dict(values))
                        or type(kept.process).set_values(kept.process, values))
    assert played(play_games(example(), [1])) == played(first[:1])  # the same game
    assert played(play_games(example({**DEFAULTS, "merges_weight": 10.0}), [1])) != played(
        first[:1])
    assert player._kept is kept and kept.games == 4
    assert sent == [{}, {"merges_weight": 10.0}]
    assert [game.seed for game in first] == [1, 2]
    assert all(game.seconds > 0 and game.moves > 0 and game.moves_evaluated > 0
               for game in first)


@pytest.mark.subprocess
def test_a_fresh_process_after_games_per_process_plays_the_same_games():
    every_two = EngineCommand(EXAMPLE.command, EXAMPLE.cwd, games_per_process=2)
    games = play_games(example(engine=every_two), [1, 2])
    kept = player._kept
    assert played(play_games(example(engine=every_two), [1, 2])) == played(games)
    assert player._kept is not kept  # started afresh after its 2 games
    assert kept.process._process.poll() == 0  # and the old one asked to quit


@pytest.mark.subprocess
def test_a_failed_engine_costs_its_unit_and_the_next_unit_starts_it_afresh(tmp_path):
    crashing = EngineCommand((sys.executable, BAD, "crash"), str(tmp_path))
    with pytest.raises(EngineLost, match=r"engine .*bad_engine.py crash': exited with status 3 "
                                         r".* its last stderr lines: bad_engine: out of memory"):
        play_games(example(engine=crashing), [1, 2])
    assert player._kept is None
    assert len(play_games(example(engine=crashing), [1])) == 1  # its first game plays again


@pytest.mark.subprocess
def test_a_hung_engine_is_lost_after_the_game_timeout(tmp_path):
    hanging = EngineCommand((sys.executable, BAD, "hang"), str(tmp_path), game_timeout=0.5)
    with pytest.raises(EngineLost, match=r"did not finish the game with seed 2 within 0.5 s \(the game timeout\)"):
        play_games(example(engine=hanging), [1, 2])


@pytest.mark.subprocess
def test_values_the_engine_does_not_declare_are_bad_input_not_a_lost_engine():
    with pytest.raises(BadInput, match="no parameter named 'merge_weight'"):
        play_games(example({"merge_weight": 1.0}), [1])


@pytest.mark.parametrize(("depth", "search"), [
    (3, Search("depth", 3)), (ByBoard(), Search("auto")), (NodeBudget(5000), Search("nodes", 5000)),
])
def test_our_depth_policies_are_the_protocols_searches(depth, search):
    assert search_for(depth) == search


def test_a_board_rule_with_settings_is_ours_not_an_engines():
    with pytest.raises(BadInput, match="auto:cap=5: an engine's auto is its own rule"):
        search_for(ByBoard(cap=5))


@pytest.mark.subprocess
def test_a_search_the_engine_does_not_declare_is_refused():
    with pytest.raises(BadInput, match=r"does not search at depth:3 \(it declares depth:0 to "
                                       r"depth:2\)"):
        search_for(3, declaration(EXAMPLE))


@pytest.mark.subprocess
def test_a_weights_file_plays_in_the_engine_it_names():
    tuned = WeightsFile(None, {**DEFAULTS, "empty_weight": 100.0}, 1, engine=NAME)
    assert engine_player(EXAMPLE, tuned, "w.yaml") == example(tuned.weights, depth=1)
    assert engine_player(EXAMPLE, tuned, "w.yaml", 2).depth == 2
    assert engine_player(EXAMPLE, None, "--engine") == example(DEFAULTS, depth=1)


@pytest.mark.parametrize(("weights", "said"), [
    (WeightsFile("classic", {}, 1), "w.yaml: holds weights of family classic, not of an engine"),
    (WeightsFile(None, DEFAULTS, 1, engine="c-example 1.0"),
     ("w.yaml: engine: holds weights of engine 'c-example 1.0', but .* declares "
     "'python-example 1.0'")),
    (WeightsFile(None, {**DEFAULTS, "sum_weight": 1.0}, 1, engine=NAME),
     "w.yaml: weights.sum_weight: not a parameter of engine 'python-example 1.0'"),
    (WeightsFile(None, {"empty_weight": 1.0}, 1, engine=NAME),
     "w.yaml: weights.merges_weight: missing parameter of engine"),
    (WeightsFile(None, DEFAULTS, 5, engine=NAME), "w.yaml: engine .* does not search at depth:5"),
])
@pytest.mark.subprocess
def test_a_weights_file_of_something_else_is_one_line(weights, said):
    with pytest.raises(BadInput, match=said):
        engine_player(EXAMPLE, weights, "w.yaml")


def test_the_digest_follows_the_files_the_command_names(tmp_path):
    script = tmp_path / "engine.py"
    script.write_text("print('one')\n")
    engine = EngineCommand((sys.executable, "engine.py"), str(tmp_path))
    before = engine_digest(engine)
    assert engine_digest(engine) == before
    script.write_text("print('two')\n")
    assert engine_digest(engine) != before
