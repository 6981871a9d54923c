"""A run whose fitness scores a position set: training scores each candidate on the set's games
(drawn per generation), validation plays games, a resume goes on exactly."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

from engine.positions.objectives import OBJECTIVES
from engine.positions.set_file import read_positions
from engine.solver import Solver
from engine.weights_file import read_weights
from tuner.config import parse_config
from tuner.games.evaluation import SerialEvaluator
from tuner.games.seeds import set_games
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "positions" / "classic-v1.npz"


def config(folder: Path, name: str, generations: int, games: int = 2):
    shutil.copy(FIXTURE, folder / "set.npz")
    return parse_config({
        "run": {"name": name, "seed": 3, "output_dir": str(folder)},
        "family": "classic",
        "params": {"monotonicity_weight": {"init": 47, "low": 1, "high": 1000, "scale": "log"},
                   "empty_weight": {"init": 270, "low": 10, "high": 10000, "scale": "log"}},
        "search": {"depth": 0},
        "evaluation": {"fitness": "agreement", "games": games},
        "positions": {"set": "set.npz"},
        "cmaes": {"popsize": 4, "max_generations": generations},
        "validation": {"games": 4, "top_k": 1},
    }, "pos.yaml", folder)


def history(run_dir: Path) -> list[dict]:
    with (run_dir / ckpt.HISTORY_FILE).open() as file:
        return list(csv.DictReader(file))


def test_training_scores_the_set_and_validation_plays_games(tmp_path):
    run_config = config(tmp_path, "pos", 2)
    TuningRun.start(run_config, tmp_path / "pos", progress=False).run(SerialEvaluator(4))
    rows = history(tmp_path / "pos")
    state = ckpt.load_state(tmp_path / "pos")
    assert [int(r["games"]) for r in rows] == [8, 16]  # 4 candidates x the set's 2 games
    # the best candidate's fitness is its agreement on the whole set, as scored directly
    top = state.elites[0]
    positions = read_positions(FIXTURE)
    direct = OBJECTIVES["agreement"].score(Solver("classic", top.weights, 0), positions)
    assert top.fitness == direct.value
    assert all(int(r["positions"]) > 0 for r in rows)
    best = read_weights(tmp_path / "pos" / "best.yaml")
    assert best.provenance["fitness"] == "mean_score"  # validated on games
    assert best.provenance["validation_fitness"] == best.provenance["validation_mean_score"]


def test_a_draw_of_the_sets_games_is_fresh_each_generation_and_the_same_for_every_candidate():
    assert set_games(3, 1, 5, 5) == [0, 1, 2, 3, 4]
    first, second = set_games(3, 1, 3, 40), set_games(3, 2, 3, 40)
    assert first == sorted(first) and len(set(first)) == 3 and first != second
    assert set_games(3, 1, 3, 40) == first and set_games(3, 1, 3, 40, again=True) != first


def test_a_resumed_position_run_equals_an_uninterrupted_one(tmp_path):
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    straight.mkdir()
    resumed.mkdir()
    TuningRun.start(config(straight, "run", 3, 1), straight / "run",
                    progress=False).run(SerialEvaluator(2))
    TuningRun.start(config(resumed, "run", 1, 1), resumed / "run",
                    progress=False).run(SerialEvaluator(2))
    TuningRun.resume(config(resumed, "run", 3, 1), resumed / "run",
                     ckpt.load_state(resumed / "run"), progress=False).run(SerialEvaluator(2))
    assert history(straight / "run") == history(resumed / "run")
