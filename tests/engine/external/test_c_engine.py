"""The C example engine (examples/engines/c_engine.c), built as its header says with the system's
C compiler: it passes every conformance check, and its own loop plays the games the protocol
plays. Skipped, with the reason, where there is no C compiler."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from engine.external import EngineProcess, Search
from engine.external.conformance import check_engine
from engine.external.protocol import read_game

pytestmark = pytest.mark.subprocess  # the engine is compiled, then run

ROOT = Path(__file__).resolve().parents[3]
SOURCE = ROOT / "examples" / "engines" / "c_engine.c"
COMPILER = shutil.which("cc")


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory) -> Path:
    if COMPILER is None:
        pytest.skip("no C compiler (cc) on this machine to build examples/engines/c_engine.c")
    binary = tmp_path_factory.mktemp("c-engine") / "c_engine"
    # the build command of the source's header, warnings as errors
    subprocess.run([COMPILER, "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(binary),
                    str(SOURCE), "-lm"], check=True, capture_output=True, text=True)
    return binary


def test_the_c_engine_passes_every_check(c_engine):
    found = list(check_engine([str(c_engine)], games=6, search=Search("depth", 1)))
    assert len(found) == 8 and all(check.passed for check in found), found


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
