"""An external engine on a Ray cluster: its files reach every node with the job, each worker
keeps one engine process, and a unit the engine failed is played again, or, when it fails every
time, ends the games with one line naming the engine and its last words."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

from engine.external.player import EngineCommand, EnginePlayer
from tuner.cluster.ray_evaluator import RayEvaluator
from tuner.errors import EvaluationError
from tuner.games.evaluation import Job, SerialEvaluator

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "engines" / "python_engine.py"
BAD = str(ROOT / "tests" / "engine" / "external" / "bad_engine.py")
NAME = "python-example 1.0"
WEIGHTS = ({"empty_weight": 270.0, "merges_weight": 700.0, "monotonicity_weight": 47.0},
           {"empty_weight": 20.0, "merges_weight": 100.0, "monotonicity_weight": 47.0})

pytestmark = pytest.mark.slow  # a cluster of three Ray nodes


def jobs_of(engine: EngineCommand) -> list[Job]:
    return [Job(i, EnginePlayer(engine, NAME, weights, 0), tuple(range(30, 38)))
            for i, weights in enumerate(WEIGHTS)]


def played(results) -> list[list[tuple]]:
    return [[(game.seed, game.score, game.moves) for game in games] for games in results]


def test_an_engines_files_reach_every_worker_which_plays_the_same_games(cluster, tmp_path):
    home = tmp_path / "only-here"
    (home / "data").mkdir(parents=True)
    shutil.copy(EXAMPLE, home / "engine.py")
    (home / "data" / "unused.txt").write_text("shipped with its folder\n")
    engine = EngineCommand((sys.executable, "engine.py"), str(home))
    with SerialEvaluator(2) as serial:
        expected = serial.play(jobs_of(engine))
    evaluator = RayEvaluator(address=cluster.address, policy=2,
                             engines={engine: ["engine.py", "data"]})
    try:
        shutil.rmtree(home)  # from now on, the engine exists only where Ray put it
        assert played(evaluator.play(jobs_of(engine))) == played(expected)
    finally:
        evaluator.close()


def test_a_unit_the_engine_failed_is_played_again(cluster, tmp_path):
    flaky = EngineCommand((sys.executable, BAD, "crash-once", str(tmp_path / "crashed")),
                          str(tmp_path))
    fine = EngineCommand((sys.executable, str(EXAMPLE)), str(tmp_path))
    with SerialEvaluator(4) as serial:
        expected = serial.play(jobs_of(fine))
    evaluator = RayEvaluator(address=cluster.address, policy=4, max_retries=2)
    try:
        assert played(evaluator.play(jobs_of(flaky))) == played(expected)
    finally:
        evaluator.close()
    assert (tmp_path / "crashed").exists()  # it did crash, once


def test_an_engine_that_fails_every_try_ends_the_games_in_one_line(cluster, tmp_path):
    (tmp_path / "doomed").write_text("33")
    crashing = EngineCommand((sys.executable, BAD, "crash-on-seed", "doomed"), str(tmp_path))
    evaluator = RayEvaluator(address=cluster.address, policy=8, max_retries=1)
    try:
        with pytest.raises(EvaluationError) as caught:
            evaluator.play(jobs_of(crashing))
    finally:
        evaluator.close()
    message = str(caught.value)
    assert "\n" not in message
    # both candidates play the doomed seed: the first whose retries are spent is named
    assert re.match(r"candidate [01]: the engine failed a unit and its retry: engine ", message)
    assert ("crash-on-seed doomed': exited with status 3 (request: 'play depth:0 30 31 32 33 34 35 "
            "36 37'); its last stderr lines: bad_engine: out of memory, giving up") in message
