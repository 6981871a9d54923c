"""Strategies: each deterministic from the config and its seed and exact after a resume; what
each one does with its games; built from narrow inputs, never the run's config; the config that
names them, through their registry."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import JobsEvaluator
from test_run import SyntheticEvaluator, config_dict

from engine import read_weights
from engine.solver import GameResult
from tuner.checker import Checker
from tuner.config import parse_config
from tuner.errors import ConfigError
from tuner.games.budget import AdaptiveGames, FixedGames
from tuner.loop.run import TuningRun
from tuner.space import ParamSpec, SearchSpace
from tuner.store import checkpoint as ckpt
from tuner.strategies import STRATEGIES, Shared, implied, strategy_for

TUNER = Path(__file__).resolve().parents[3] / "tuner"

# each strategy as a config writes it: its evaluation.games, and its strategy section
WRITTEN = {
    "fixed": (4, None),
    "racing": ({"min": 4, "max": 16, "batch": 4}, None),
    "population": (2, {"name": "population", "factor": 2}),
    "uh-cma-es": (4, {"name": "uh-cma-es", "min_games": 2, "max_games": 16}),
    "lra-cma-es": (4, {"name": "lra-cma-es"}),
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
    games = AdaptiveGames(4, 16, 4) if kind.games == "race" else FixedGames(4)
    checker = Checker("defaults")
    settings = kind.read(checker, {}, None if kind.games == "race" else 4)
    assert checker.problems == []
    space = SearchSpace((ParamSpec("a", 1.0, 0.0, 2.0), ParamSpec("b", 3.0, 3.0, 3.0, tuned=False),
                         ParamSpec("c", 10.0, 1.0, 100.0, "log")))
    shared = Shared(seed=5, sigma0=0.2, popsize=None, restarts=0, games=games)
    strategy = strategy_for(name, settings, shared, space)
    xs = strategy.ask()
    assert strategy.name == name and strategy.budget() == games
    # pycma's default population for two tuned parameters (6), times the strategy's factor
    assert len(xs) == strategy.popsize == 6 * kind.scale(settings)
    assert all(x.shape == (2,) and ((0 <= x) & (x <= 1)).all() for x in xs)
    np.testing.assert_allclose(strategy.mean, [0.5, 0.5])  # the space's initial point


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


class NoisyEvaluator(JobsEvaluator):
    """Scores that are nothing but noise (``noise`` > 0) or a plain function of the weights."""

    def __init__(self, noise: bool):
        self.noise = noise

    def play(self, jobs, progress=None):
        out = []
        for job in jobs:
            level = math.log(job.spec.weights["merges_weight"])
            out.append([GameResult(seed, int(1000 * level + (
                np.random.default_rng(seed % 2**32).normal(0, 1e6) if self.noise else 0)),
                2048, 100, 0.001, 1000, 0) for seed in job.seeds])
        return out


def test_uncertainty_handling_plays_more_games_where_noise_decides_the_ranks(tmp_path):
    config = strategy_config(tmp_path, "uh-cma-es", 6, "noisy")
    noisy = TuningRun.start(config, config.run_dir, progress=False).run(NoisyEvaluator(True))
    config = strategy_config(tmp_path, "uh-cma-es", 6, "clean")
    clean = TuningRun.start(config, config.run_dir, progress=False).run(NoisyEvaluator(False))
    noisy_games = [row["games_per_candidate"] for row in noisy.history]
    clean_games = [row["games_per_candidate"] for row in clean.history]
    assert noisy_games[0] == clean_games[0] == 4  # evaluation.games
    assert noisy_games[-1] > 4 > clean_games[-1] >= 2
    assert [row["games_mean"] for row in noisy.history] == noisy_games  # as played
    assert noisy.history[-1]["noise"] > 0 > clean.history[-1]["noise"]
    # the second looks are training games: counted, on seeds of their own
    assert noisy.games > sum(row["games_mean"] * row["popsize"] for row in noisy.history)


def test_the_implied_strategies_leave_the_resolved_config_as_it_was(tmp_path):
    for name in ("fixed", "racing"):
        config = strategy_config(tmp_path, name, 2)
        assert config.strategy.name == name and "strategy" not in config.resolved()
    config = strategy_config(tmp_path, "uh-cma-es", 2)
    assert config.resolved()["strategy"] == {"name": "uh-cma-es", "min_games": 2,
                                             "max_games": 16, "reevaluate": "auto"}
    assert parse_config(config.resolved(), "stored").resolved() == config.resolved()


@pytest.mark.parametrize(("games", "section", "problem"), [
    (4, {"name": "annealing"}, "strategy.name: expected one of fixed, racing, population"),
    (4, {"name": "racing"}, "evaluation.games: strategy racing races the candidates"),
    ({"min": 4, "max": 8}, {"name": "lra-cma-es"},
     "evaluation.games: strategy lra-cma-es plays a number of games per candidate"),
    (4, {"name": "uh-cma-es", "min_games": 8}, "strategy: min_games (8) <= evaluation.games (4)"),
    (4, {"name": "uh-cma-es", "reevaluate": 0}, "strategy.reevaluate:"),
    (4, {"name": "population", "factor": 1}, "strategy.factor:"),
    (4, {"name": "fixed", "factor": 2}, "strategy.factor: unknown key"),
    (4, "uh-cma-es", "strategy: expected a mapping"),
])
def test_a_strategy_badly_written_is_refused_naming_the_key(tmp_path, games, section, problem):
    doc = config_dict(tmp_path, **{"evaluation.games": games})
    doc["strategy"] = section
    with pytest.raises(ConfigError) as info:
        parse_config(doc, "c")
    assert f"c: {problem}" in str(info.value)


def test_settings_a_strategy_cannot_take_are_refused(tmp_path):
    doc = config_dict(tmp_path, **{"cmaes.restarts": 1})
    doc["strategy"] = {"name": "lra-cma-es"}
    with pytest.raises(ConfigError, match="c: cmaes.restarts: strategy lra-cma-es does not "
                                          "restart: set it to 0"):
        parse_config(doc, "c")
    doc = config_dict(tmp_path, **{"evaluation.reevaluate_best": 2})
    doc["strategy"] = {"name": "uh-cma-es"}
    with pytest.raises(ConfigError, match="c: evaluation.reevaluate_best: not with strategy "
                                          "uh-cma-es"):
        parse_config(doc, "c")


def test_lra_without_its_library_is_refused_with_the_command_that_installs_it(tmp_path,
                                                                              monkeypatch):
    from tuner.strategies import lra_cma_es

    monkeypatch.setattr(lra_cma_es, "installed", lambda: False)
    doc = config_dict(tmp_path)
    doc["strategy"] = {"name": "lra-cma-es"}
    with pytest.raises(ConfigError, match="pip install 'cmaes>=0.11'"):
        parse_config(doc, "c")


def test_a_run_resumed_with_another_strategy_is_refused_naming_its_own(tmp_path, capsys):
    from tuner.cli.main import main

    config = strategy_config(tmp_path, "racing", 1)
    TuningRun.start(config, config.run_dir, progress=False).run(SyntheticEvaluator())
    edited = tmp_path / "edited.yaml"
    doc = config_dict(tmp_path, **{"evaluation.games": 4})
    doc["strategy"] = {"name": "uh-cma-es"}
    edited.write_text(yaml.safe_dump(doc), encoding="utf-8")
    before = (config.run_dir / ckpt.CHECKPOINT_FILE).read_bytes()
    capsys.readouterr()  # what the run printed
    assert main(["resume", str(config.run_dir), "--config", str(edited)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert "strategy (the run's not set, here {'name': 'uh-cma-es'" in line
    assert line.endswith(f"resume it with its own settings: tune resume {config.run_dir}")
    assert (config.run_dir / ckpt.CHECKPOINT_FILE).read_bytes() == before
