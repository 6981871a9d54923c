"""The C example engine (examples/engines/c_engine.c), built as its header says with the system's
C compiler: it passes every conformance check, and its own loop plays the games the protocol
plays. protocol.h does all of the protocol: an engine on it with int and unbounded parameters, a
parameter that says where it acts, depths from 1 to 12, node budgets and no rule of its own
passes the check too, and an adapter written before those fields builds and declares what it
did. Skipped, with the reason, where there is no C compiler."""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from engine.external import EngineProcess, Param, Search
from engine.external.conformance import Check, check_engine
from engine.external.protocol import read_game

pytestmark = pytest.mark.subprocess  # the engine is compiled, then run

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "examples" / "engines" / "c_engine.c"
FULL = Path(__file__).with_name("protocol_h_engine.c")
COMPILER = shutil.which("cc")


def build(source: Path, binary: Path, *flags: str) -> Path:
    if COMPILER is None:
        pytest.skip("no C compiler (cc) on this machine to build examples/engines/c_engine.c")
    # the build command of the source's header, warnings as errors
    subprocess.run([COMPILER, "-O2", "-Wall", "-Wextra", "-Werror", *flags, "-o", str(binary),
                    str(source), "-lm"], check=True, capture_output=True, text=True)
    return binary


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory) -> Path:
    return build(SOURCE, tmp_path_factory.mktemp("c-engine") / "c_engine")


@pytest.fixture(scope="module")
def full_engine(tmp_path_factory) -> Path:
    return build(FULL, tmp_path_factory.mktemp("full-engine") / "full_engine")


def test_the_c_engine_passes_every_check_at_every_kind_of_search(c_engine):
    """depth:0 plays the games; depth:1, auto and nodes:1000 are checked for per-game state,
    depth:1 for the lost penalty, which says it acts there."""
    found = [check for check in check_engine([str(c_engine)], games=6)
             if isinstance(check, Check)]
    assert len(found) == 8 and all(check.passed for check in found), found
    assert found[-1].detail.endswith("6 at depth:0, one at each of depth:1, auto, nodes:1000")
    assert found[-2].detail.endswith("at depth:0, depth:1)")


@pytest.mark.parametrize(("search", "seeds"), [("depth:1", ["3", "4"]), ("auto", ["3"])])
def test_its_own_loop_plays_the_games_the_protocol_plays(c_engine, search, seeds):
    """At a fixed depth and at its own rule (its games, of thousands of moves at 1 to 3 layers,
    are left out of the checks above for their cost)."""
    alone = subprocess.run([str(c_engine), "--play", search, *seeds], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    with EngineProcess([str(c_engine)]) as engine:
        engine.set_values({"empty_weight": 270.0})  # its default: the same games
        played = [game for game, _steps in
                  engine.play(Search.parse(search), [int(seed) for seed in seeds])]
    # the same games, each its own time
    assert [replace(read_game(line), seconds=None) for line in alone] == [
        replace(game, seconds=None) for game in played]
    assert len(played) == len(seeds)


def test_its_declaration_names_the_classic_constants_at_their_usual_values(c_engine):
    with EngineProcess([str(c_engine)]) as engine:
        declared = {param.name: param.default for param in engine.declaration.params}
        searches = engine.declaration.depths, engine.declaration.auto
    assert declared == {"lost_penalty": 200000.0, "monotonicity_power": 4.0,
                        "monotonicity_weight": 47.0, "sum_power": 3.5, "sum_weight": 11.0,
                        "merges_weight": 700.0, "empty_weight": 270.0}
    assert searches == ((0, 4), True)


def test_an_engine_on_all_of_protocol_h_declares_what_it_does_and_passes_the_check(full_engine):
    with EngineProcess([str(full_engine)]) as engine:
        declared = engine.declaration
    assert declared.params == (Param("monotonicity_power", "int", 4, 1, 8),
                               Param("empty_weight", "float", 270),
                               Param("lost_penalty", "float", 200000, 0, 1e6, Search("depth", 2)))
    assert (declared.depths, declared.auto, declared.nodes) == ((1, 12), False, True)
    found = [check for check in check_engine([str(full_engine)], games=6)
             if isinstance(check, Check)]
    assert all(check.passed for check in found), found
    assert found[-1].detail.endswith("6 at depth:1, one at each of depth:2, nodes:1000")


def test_protocol_h_reads_searches_of_many_digits_and_refuses_what_is_not_declared(full_engine):
    requests = ["tune2048 1", "play depth:12 5", "play depth:13 5", "play depth:0 5",
                "play auto 5", "play nodes:50 5", "play nodes:0 5", "set monotonicity_power 2.5",
                "set monotonicity_power 3", "quit"]
    lines = subprocess.run([str(full_engine)], input="\n".join(requests) + "\n",
                           capture_output=True, text=True, check=True).stdout.splitlines()
    answers = lines[lines.index("ready 1") + 1:]
    refused = "not supported (depth:1 to depth:12, nodes:N)"
    assert [answer.split()[0] for answer in answers] == [
        "game", "done", "error", "error", "error", "game", "done", "error", "error", "ok"]
    assert answers[2] == f"error search depth:13 {refused}"
    assert answers[3:5] == [f"error search depth:0 {refused}", f"error search auto {refused}"]
    assert answers[7] == f"error search nodes:0 {refused}"
    assert answers[8] == "error monotonicity_power: an int parameter, not whole: 2.5"
    alone = subprocess.run([str(full_engine), "--play", "depth:10", "5"], capture_output=True,
                           text=True, check=True).stdout.strip()
    assert replace(read_game(alone), seconds=None) == replace(read_game(answers[0]), seconds=None)
    refused = subprocess.run([str(full_engine), "--play", "auto", "5"], capture_output=True,
                             text=True, check=False)
    assert refused.returncode == 2 and "--play SEARCH SEED... (SEARCH: depth:1 to depth:12, " \
        "nodes:N)" in refused.stderr


def test_an_adapter_written_before_the_optional_fields_declares_what_it_did(tmp_path):
    """Positional initializers without them (warnings of missing ones aside): float parameters
    with bounds, depth:0 to its max_depth, and auto."""
    binary = build(FULL, tmp_path / "as_before", "-DAS_BEFORE", "-Wno-missing-field-initializers")
    with EngineProcess([str(binary)]) as engine:
        declared = engine.declaration
        [(game, _)] = engine.play(Search("auto"), [3])
    assert declared.params == (Param("monotonicity_power", "float", 4, 1, 8),
                               Param("empty_weight", "float", 270, 0, 10000))
    assert (declared.depths, declared.auto, declared.nodes) == ((0, 1), True, False)
    assert game.seed == 3 and math.isfinite(game.score)


def test_its_shipped_run_config_reads_with_the_built_engine(c_engine):
    """examples/engines/c-engine-d2.yaml, read beside the engine built as its header says: its
    parameters are the engine's, at the values it declares."""
    from tuner.config import load_config

    config_file = c_engine.parent / "c-engine-d2.yaml"
    shutil.copy(ROOT / "examples" / "engines" / "c-engine-d2.yaml", config_file)
    config = load_config(config_file)
    assert config.player_name == "engine c-example 1.0" and config.search.depth == 2
    declared = {param.name: param.default for param in config.engine.declared.params}
    assert {p.name: p.init for p in config.params} == declared
    assert [p.name for p in config.params if not p.tuned] == ["lost_penalty"]
