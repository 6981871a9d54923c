"""Ask and tell: a loop whose games the caller plays keeps the state ``tune run`` keeps, and a loop
stopped between an ask and its tell resumes to the candidates an uninterrupted loop asks."""

from __future__ import annotations

import errno
import math
from pathlib import Path

import pytest
import yaml

from tuner.api import AskTell, Candidates, Fitness
from tuner.config import parse_config
from tuner.games.evaluation import SerialEvaluator
from tuner.games.fitness import score_fitness
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt
from tuner.store.store import MemoryStore
from tuner.strategies import restore_strategy


def config(output_dir: str) -> dict:
    """Three generations of four candidates at depth 1, eight games each."""
    return {
        "run": {"name": "asked", "output_dir": output_dir, "seed": 5},
        "family": "classic",
        "params": {
            "monotonicity_weight": {"init": 20, "low": 1, "high": 500, "scale": "log"},
            "merges_weight": {"init": 300, "low": 10, "high": 5000, "scale": "log"},
        },
        "search": {"depth": 1},
        "evaluation": {"games": 8},
        "cmaes": {"popsize": 4, "max_generations": 3},
        "validation": {"games": 8, "top_k": 2},
    }


def written(folder: Path, output_dir: str) -> Path:
    path = folder / f"{output_dir}.yaml"
    path.write_text(yaml.safe_dump(config(output_dir)), encoding="utf-8")
    return path


def made_up(weights: dict[str, float]) -> float:
    """A fitness without games: highest at monotonicity 20, merges 700."""
    return -math.log(weights["monotonicity_weight"] / 20) ** 2 - math.log(
        weights["merges_weight"] / 700) ** 2


def test_playing_the_asked_seeds_keeps_the_state_tune_run_keeps(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with SerialEvaluator() as evaluator:
        run = TuningRun.start(parse_config(config("outputs"), "c.yaml"), MemoryStore(),
                              progress=False)
        run.run(evaluator)
    with AskTell.start(written(tmp_path, "outputs")) as loop:
        while loop.stop_reason() is None:
            asked = loop.ask()
            loop.tell([score_fitness([run.config.player(weights).solver().play(seed)
                                      for seed in asked.seeds], "mean_score")
                       for weights in asked.weights])
        assert loop.stop_reason() == "reached max_generations (3)"
        state = loop.state
    for mine, theirs in zip(state.history, run.state.history, strict=True):
        assert mine.pop("positions") == 0 and theirs.pop("positions") > 0
        assert mine == theirs
    assert (state.games, state.evaluations, state.elites) == (
        run.state.games, run.state.evaluations, run.state.elites)
    mine, theirs = (restore_strategy(s.strategy, "fixed") for s in (state, run.state))
    # the same strategy state: the same next candidates
    assert [list(x) for x in mine.ask()] == [list(x) for x in theirs.ask()]


def test_a_loop_stopped_before_a_tell_resumes_to_the_same_candidates(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    whole: list[Candidates] = []
    with AskTell.start(written(tmp_path, "whole")) as loop:
        while loop.stop_reason() is None:
            whole.append(loop.ask())
            loop.tell([made_up(weights) for weights in whole[-1].weights])
    assert [asked.generation for asked in whole] == [1, 2, 3]

    with AskTell.start(written(tmp_path, "parts")) as loop:
        for _ in range(2):
            asked = loop.ask()
            loop.tell([made_up(weights) for weights in asked.weights])
        assert loop.ask() == whole[2]  # asked, never told: the checkpoint is generation 2's
    run_dir = Path("parts/asked")
    assert ckpt.load_state(run_dir).generation == 2
    with AskTell.resume(run_dir) as loop:
        assert loop.ask() == whole[2]
        loop.tell([made_up(weights) for weights in whole[2].weights])
        assert loop.stop_reason() == "reached max_generations (3)"
    for name in (ckpt.HISTORY_FILE, ckpt.BEST_FILE):
        assert (run_dir / name).read_text() == Path("whole/asked", name).read_text().replace(
            "output_dir: whole", "output_dir: parts"), name


def test_a_fitness_keeps_its_standard_error_and_games(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with AskTell.start(written(tmp_path, "outputs")) as loop:
        asked = loop.ask()
        loop.tell([Fitness(made_up(weights), 0.5, 6) for weights in asked.weights])
        row = loop.state.history[0]
    assert (row["best_stderr"], row["games"], row["games_mean"]) == (0.5, 24, 6)
    assert ckpt.load_state(Path("outputs/asked")).elites[0].stderr == 0.5


def test_ask_and_tell_refuse_what_does_not_follow(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with AskTell.start(written(tmp_path, "outputs")) as loop:
        with pytest.raises(ValueError, match="call ask"):
            loop.tell([1.0] * 4)
        asked = loop.ask()
        assert loop.ask() is asked and len(asked.seeds) == 8 and len(asked.weights) == 4
        assert asked.weights[0].keys() == {"lost_penalty", "monotonicity_power",
                                           "monotonicity_weight", "sum_power", "sum_weight",
                                           "merges_weight", "empty_weight"}
        with pytest.raises(ValueError, match="4 candidates were asked, got 3"):
            loop.tell([1.0] * 3)
        with pytest.raises(ValueError, match="candidate 1: expected a finite fitness"):
            loop.tell([1.0, math.nan, 1.0, 1.0])
    assert not Path("outputs").exists()  # closed before its first tell: nothing left behind


def test_a_tell_that_fails_leaves_the_run_at_its_last_checkpoint(tmp_path, monkeypatch):
    def full(run_dir, state):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.chdir(tmp_path)
    with AskTell.start(written(tmp_path, "outputs")) as loop:
        first = loop.ask()
        loop.tell([made_up(weights) for weights in first.weights])
        second = loop.ask()
        with monkeypatch.context() as disk:
            disk.setattr(ckpt, "save_state", full)
            with pytest.raises(OSError):
                loop.tell([made_up(weights) for weights in second.weights])
        with pytest.raises(ValueError, match="resume the run from its last checkpoint"):
            loop.ask()
    with AskTell.resume("outputs/asked") as loop:
        assert loop.state.generation == 1 and loop.ask() == second
