"""Strategies: each deterministic from the config and its seed and exact after a resume; built
from narrow inputs, never the run's config; the config that names them, through their registry;
a strategy that a version removed, refused in a config and in a checkpoint."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import run_tune
from test_run import SyntheticEvaluator, config_dict

from engine import read_weights
from tuner.checker import Checker
from tuner.config import parse_config
from tuner.config.removed import REMOVED as REMOVED_KEYS
from tuner.errors import ConfigError
from tuner.loop.run import TuningRun
from tuner.space import ParamSpec, SearchSpace
from tuner.store import checkpoint as ckpt
from tuner.strategies import (
    REMOVED,
    STRATEGIES,
    Shared,
    StrategyStateError,
    implied,
    restore_strategy,
    strategy_for,
)
from tuner.strategies.base import Strategy

TUNER = Path(__file__).resolve().parents[3] / "tuner"
# run directories of tune2048 0.3, stopped after generation 1, of the strategies 0.4.0 removed
REMOVED_RUNS = Path(__file__).resolve().parents[2] / "data" / "removed"

# each strategy as a config writes it: its evaluation.games, and its strategy section
WRITTEN = {
    "fixed": (4, None),
    "racing": ({"min": 4, "max": 16, "batch": 4}, None),
    "population": (2, {"name": "population", "factor": 2}),
}


def strategy_config(tmp_path, name: str, generations: int, run_name: str = "t", **overrides):
    games, section = WRITTEN[name]
    doc = config_dict(tmp_path, **{"evaluation.games": games, "run.name": run_name,
                                   "cmaes.max_generations": generations}, **overrides)
    if section is not None:
        doc["strategy"] = section
    return parse_config(doc, name)


def test_every_strategy_is_written_here():
    assert set(WRITTEN) == set(STRATEGIES)


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_a_strategy_resumed_anywhere_plays_as_one_that_never_stopped(tmp_path, name):
    straight = strategy_config(tmp_path, name, 5, "straight")
    global_state = np.random.get_state()[1].copy()
    TuningRun.start(straight, straight.run_dir, progress=False).run(SyntheticEvaluator())
    assert (np.random.get_state()[1] == global_state).all()  # its own random state only
    again = strategy_config(tmp_path, name, 5, "again")  # the same seed: the same run
    TuningRun.start(again, again.run_dir, progress=False).run(SyntheticEvaluator())
    first = strategy_config(tmp_path, name, 2, "resumed")
    TuningRun.start(first, first.run_dir, progress=False).run(SyntheticEvaluator())
    resumed = strategy_config(tmp_path, name, 5, "resumed")
    TuningRun.resume(resumed, resumed.run_dir, ckpt.load_state(resumed.run_dir),
                     progress=False).run(SyntheticEvaluator())
    history = (straight.run_dir / ckpt.HISTORY_FILE).read_text()
    assert history == (again.run_dir / ckpt.HISTORY_FILE).read_text()
    assert history == (resumed.run_dir / ckpt.HISTORY_FILE).read_text()
    assert len(history.splitlines()) == 6
    weights = read_weights(straight.run_dir / ckpt.BEST_FILE).weights
    assert weights == read_weights(resumed.run_dir / ckpt.BEST_FILE).weights


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_a_strategy_is_built_from_its_settings_the_shared_values_and_the_space(name):
    """No config is read: the settings are its registry entry's defaults, and the space is
    built from parameters alone."""
    kind = STRATEGIES[name]
    checker = Checker("defaults")
    settings = kind.read(checker, {})
    assert checker.problems == []
    space = SearchSpace((ParamSpec("a", 1.0, 0.0, 2.0), ParamSpec("b", 3.0, 3.0, 3.0, tuned=False),
                         ParamSpec("c", 10.0, 1.0, 100.0, "log")))
    shared = Shared(seed=5, sigma0=0.2, popsize=None, restarts=0)
    strategy = strategy_for(name, settings, shared, space)
    xs = strategy.ask()
    assert strategy.name == name
    # pycma's default population for two tuned parameters (6), times the strategy's factor
    assert len(xs) == strategy.popsize == 6 * kind.scale(settings)
    assert all(x.shape == (2,) and ((0 <= x) & (x <= 1)).all() for x in xs)
    # the space's initial point, at the first step size
    result = strategy.result
    np.testing.assert_allclose(result.mean, [0.5, 0.5])
    assert (result.sigma, result.restart) == (0.2, 0)


def test_a_strategy_answers_only_what_pycmas_optimisers_do():
    """ask, tell, stop, result and its state (with its name and population): the games each
    candidate plays are the loop's, from the run's budget."""
    members = {name for name in vars(Strategy) if not name.startswith("_")}
    assert members == {"ask", "tell", "stop", "result", "dumps"}
    assert set(Strategy.__annotations__) == {"name", "popsize"}


def test_the_games_alone_imply_one_strategy_of_each_form():
    assert (implied("number"), implied("race")) == ("fixed", "racing")
    assert sorted(kind.games for kind in STRATEGIES.values() if kind.implied) == ["number", "race"]


def test_strategies_and_the_space_import_nothing_of_the_config_or_the_run():
    """Not even for type checking: the config imports them, and a strategy is built from narrow
    inputs (``Shared``), so no import circle runs through them."""
    for path in [*sorted((TUNER / "strategies").glob("*.py")), TUNER / "space.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            bad = [n for n in names if n.split(".")[:2] in (["tuner", "config"], ["tuner", "run"],
                                                          ["tuner", "loop"])]
            assert bad == [], f"{path.name} imports {bad}"
            if path.name == "space.py":
                assert not any(n.startswith("tuner.strategies") for n in names)


def test_a_larger_population_plays_fewer_games_each(tmp_path):
    config = strategy_config(tmp_path, "population", 2)
    state = TuningRun.start(config, config.run_dir, progress=False).run(SyntheticEvaluator())
    assert config.popsize == 12  # factor 2 x cmaes.popsize 6
    assert [row["popsize"] for row in state.history] == [12, 12]
    assert state.games == 2 * 12 * 2


def test_popsize_auto_fills_the_cluster_in_multiples_of_the_strategys_factor(tmp_path):
    doc = config_dict(tmp_path, **{"evaluation.games": 2, "cmaes.popsize": "auto"})
    doc["strategy"] = {"name": "population", "factor": 4}
    config = parse_config(doc, "auto")
    run = TuningRun.start(config, config.run_dir, progress=False)
    run.resolve_popsize(512)
    assert run.config.popsize == 4 * run.config.cmaes.popsize
    assert run.strategy.popsize == run.config.popsize
    assert run.config.cmaes.popsize > 6  # a large cluster: more than pycma's default of 7 / 4


def test_the_implied_strategies_leave_the_resolved_config_as_it_was(tmp_path):
    for name in ("fixed", "racing"):
        config = strategy_config(tmp_path, name, 2)
        assert config.strategy.name == name and "strategy" not in config.resolved()
    config = strategy_config(tmp_path, "population", 2)
    assert config.resolved()["strategy"] == {"name": "population", "factor": 2}
    assert parse_config(config.resolved(), "stored").resolved() == config.resolved()


@pytest.mark.parametrize(("games", "section", "problem"), [
    (4, {"name": "annealing"}, "strategy.name: expected one of fixed, racing, population"),
    (4, {"name": "racing"}, "evaluation.games: strategy racing races the candidates"),
    ({"min": 4, "max": 8}, {"name": "population"},
     "evaluation.games: strategy population plays a number of games per candidate"),
    (4, {"name": "population", "factor": 1}, "strategy.factor:"),
    (4, {"name": "fixed", "factor": 2}, "strategy.factor: unknown key"),
    (4, "population", "strategy: expected a mapping"),
])
def test_a_strategy_badly_written_is_refused_naming_the_key(tmp_path, games, section, problem):
    doc = config_dict(tmp_path, **{"evaluation.games": games})
    doc["strategy"] = section
    with pytest.raises(ConfigError) as info:
        parse_config(doc, "c")
    assert f"c: {problem}" in str(info.value)


def test_a_run_resumed_with_another_strategy_is_refused_naming_its_own(tmp_path, capsys):
    from tuner.cli.main import main

    config = strategy_config(tmp_path, "racing", 1)
    TuningRun.start(config, config.run_dir, progress=False).run(SyntheticEvaluator())
    edited = tmp_path / "edited.yaml"
    doc = config_dict(tmp_path, **{"evaluation.games": 4})
    doc["strategy"] = {"name": "population"}
    edited.write_text(yaml.safe_dump(doc), encoding="utf-8")
    before = (config.run_dir / ckpt.CHECKPOINT_FILE).read_bytes()
    capsys.readouterr()  # what the run printed
    assert main(["resume", str(config.run_dir), "--config", str(edited)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "strategy (the run's not set, here {'name': 'population'" in line
    assert line.endswith(f"resume it with its own settings: tune resume {config.run_dir}")
    assert (config.run_dir / ckpt.CHECKPOINT_FILE).read_bytes() == before


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_a_removed_strategy_is_refused_in_a_config_naming_the_version_and_what_instead(
        tmp_path, name):
    doc = config_dict(tmp_path)
    doc["strategy"] = {"name": name}
    with pytest.raises(ConfigError) as info:
        parse_config(doc, "c")
    assert str(info.value) == (
        f"c: strategy.name: {name} was removed in tune2048 {REMOVED[name]} (measured, it cost "
        "more than 64 fixed games a candidate to reach the same validated score; see "
        "CHANGELOG.md): remove the strategy section: every candidate then plays "
        "evaluation.games games")


def test_the_config_refuses_the_strategies_the_registry_removed():
    refused = {value for entry in REMOVED_KEYS if entry.key == "strategy.name"
               for value in entry.values}
    assert refused == set(REMOVED) and not refused & set(STRATEGIES)


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_a_checkpoint_holding_a_removed_strategys_state_is_refused(name):
    state = ckpt.load_state(REMOVED_RUNS / name).strategy
    with pytest.raises(StrategyStateError) as info:
        restore_strategy(state, "fixed")
    assert str(info.value) == (
        f"the checkpoint holds strategy {name}, removed in tune2048 {REMOVED[name]}, so the run "
        "cannot go on: start a new one from its config.yaml without the strategy section")


@pytest.mark.parametrize("name", sorted(REMOVED))
def test_resuming_a_run_of_a_removed_strategy_is_refused_in_one_line_writing_nothing(
        tmp_path, no_ray, name):
    shutil.copytree(REMOVED_RUNS / name, tmp_path / "run")
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    result = run_tune(["resume", "run"], tmp_path, no_ray)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"tune: error: run/config.yaml: strategy.name: {name} was removed in "
                           f"tune2048 {REMOVED[name]} (")
    assert line.endswith("remove the strategy section: every candidate then plays "
                         "evaluation.games games")
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before
