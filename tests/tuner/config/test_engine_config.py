"""A config's ``engine`` section (tuner.config.engine): the engine started and greeted while the
config is read, its parameters and search checked against what it declares, every problem one
line naming the key."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from engine.external.player import EngineCommand, EnginePlayer
from tuner.config import parse_config
from tuner.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "engines"
BAD = str(ROOT / "tests" / "engine" / "external" / "bad_engine.py")


def document(**changes) -> dict:
    """A run of the Python example engine, from a config in ``examples/engines``."""
    config = {
        "run": {"name": "py", "seed": 3},
        "engine": {"command": [sys.executable, "python_engine.py"], "ship": ["python_engine.py"]},
        "params": {"empty_weight": {"init": 270, "low": 10, "high": 5000, "scale": "log"},
                   "merges_weight": {"low": 10, "high": 5000},
                   "monotonicity_weight": 47},
        "search": {"depth": 1},
        "evaluation": {"games": 8},
        "cmaes": {"popsize": 4, "max_generations": 2},
    }
    for path, value in changes.items():
        section, _, key = path.partition(".")
        if value is None:
            config[section].pop(key) if key else config.pop(section)
        elif key:
            config[section][key] = value
        else:
            config[section] = value
    return config


def problems(config: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(config, "e.yaml", EXAMPLES)
    return str(caught.value).splitlines()


@pytest.mark.subprocess
def test_an_engine_config_is_checked_against_what_the_engine_declares():
    config = parse_config(document(), "e.yaml", EXAMPLES)
    assert config.family is None and config.player_name == "engine python-example 1.0"
    assert config.engine.engine == EngineCommand((sys.executable, "python_engine.py"),
                                                 str(EXAMPLES))
    assert [(p.name, p.init, p.tuned) for p in config.params] == [
        ("empty_weight", 270, True), ("merges_weight", 700.0, True),
        ("monotonicity_weight", 47, False)]  # init: the declared default
    player = config.player({"empty_weight": 1.0, "merges_weight": 2.0,
                            "monotonicity_weight": 47.0})
    assert isinstance(player, EnginePlayer) and player.name == "python-example 1.0"
    assert config.shipped == {config.engine.engine: ("python_engine.py",)}


@pytest.mark.subprocess
def test_the_stored_config_names_the_engine_from_the_run_directory(tmp_path):
    config = parse_config(document(**{"run.output_dir": str(tmp_path / "out")}), "e.yaml",
                          EXAMPLES)
    stored = config.resolved()
    assert "family" not in stored
    assert stored["engine"] == {
        "command": [sys.executable, "python_engine.py"],
        "cwd": os.path.relpath(EXAMPLES, tmp_path / "out" / "py"), "ship": ["python_engine.py"],
        "game_timeout": 60.0, "games_per_process": 0}
    again = parse_config(stored, "config.yaml", config.run_dir)  # as a resume reads it
    assert again.engine == config.engine and again.resolved() == stored


@pytest.mark.parametrize(("changes", "said"), [
    ({"family": "classic"}, ("e.yaml: engine: a config tunes a family or an engine: remove family "
                            "or engine")),
    ({"engine.command": []}, "e.yaml: engine.command: expected the engine's command line"),
    ({"engine.command": "unclosed 'quote"}, "e.yaml: engine.command: cannot split"),
    ({"engine.command": ["no-such-engine-here"]},
     "e.yaml: engine.command: engine 'no-such-engine-here': cannot start it"),
    ({"engine.command": [sys.executable, BAD, "silent"]},
     "e.yaml: engine.command: engine .*silent': exited with status 0 .request: 'tune2048 1'.$"),
    ({"engine.command": [sys.executable, BAD, "version-2"]},
     ("e.yaml: engine.command: engine .*version-2': handshake: the engine speaks protocol 2; "
     "tune2048 speaks 1")),
    ({"engine.cwd": "no-such-folder"}, "e.yaml: engine.cwd: .*no-such-folder is not a directory"),
    ({"engine.ship": ["../c_engine.c"]}, ("e.yaml: engine.ship: '../c_engine.c' is not a path under "
                                         "cwd")),
    ({"engine.ship": ["missing.bin"]}, "e.yaml: engine.ship: 'missing.bin': no such file"),
    ({"engine.game_timeout": 0}, "e.yaml: engine.game_timeout: expected a number"),
    ({"engine.games_per_process": -1}, "e.yaml: engine.games_per_process: expected an integer"),
    ({"engine.timeout": 5}, "e.yaml: engine.timeout: unknown key .*did you mean 'game_timeout'"),
    ({"params.merge_weight": 3}, ("e.yaml: params.merge_weight: unknown key .*did you mean "
                                 "'merges_weight'")),
    ({"search.depth": 3}, ("e.yaml: search.depth: engine 'python-example 1.0' does not search at "
                          r"depth:3 \(it declares depth:0 to depth:2\)")),
    ({"search.depth": "auto:cap=5"}, ("e.yaml: search.depth: auto:cap=5: an engine's auto is its "
                                     "own rule")),
    ({"validation": {"reference": "classic-reference"}},
     ("e.yaml: validation.reference: the shipped baselines hold weights of our families, not of "
     "an engine: name start")),
])
@pytest.mark.subprocess
def test_a_bad_engine_section_is_one_line_naming_its_key(changes, said):
    found = problems(document(**changes))
    assert len(found) == 1 and re.search(said, found[0]), found


def test_a_family_run_still_affords_only_a_tuning_depth():
    config = document(engine=None, family="classic", params={
        "monotonicity_weight": {"low": 1, "high": 100}, "merges_weight": {"low": 1, "high": 1000}})
    config["search"]["depth"] = "auto"
    [found] = problems(config)
    assert found.startswith("e.yaml: search.depth: expected the board rule capped at 5 or less "
                            "in a tuning run")
