"""The live status: ``status.json`` written as a run starts, after every generation and as the
job ends, in each final state, without changing what the run computes."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tuner.cli.main import main
from tuner.config import parse_config
from tuner.errors import EvaluationError
from tuner.games.evaluation import SerialEvaluator
from tuner.loop.live_status import LiveStatus
from tuner.loop.observers import Observer
from tuner.loop.record import GenerationRecord, Spent
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import request_stop
from tuner.store.status_file import read_status, this_host


def config_dict(tmp_path, generations: int = 2) -> dict:
    return {
        "run": {"name": "s", "output_dir": str(tmp_path), "seed": 5},
        "family": "classic",
        "params": {
            "monotonicity_weight": {"init": 10, "low": 1, "high": 1000, "scale": "log"},
            "merges_weight": {"init": 100, "low": 10, "high": 10000, "scale": "log"},
        },
        "search": {"depth": 0, "cutoff": 0.0},
        "evaluation": {"games": 2},
        "cmaes": {"sigma0": 0.3, "popsize": 4, "max_generations": generations},
        "validation": {"games": 2, "top_k": 1},
    }


class Reader(Observer):
    """Reads the status file after each generation, as another shell would."""

    def __init__(self, run_dir):
        self.run_dir = run_dir
        self.seen = []

    def generation_ended(self, record, state):
        self.seen.append(read_status(self.run_dir)[0])


def test_the_status_is_written_each_generation_and_done_at_the_end(tmp_path):
    config = parse_config(config_dict(tmp_path), "s.yaml")
    run = TuningRun.start(config, config.run_dir, progress=False)
    ticks = iter(range(1000, 2000, 10))
    status = LiveStatus(config, run.store, run.state, idle_rate=1e6, clock=lambda: next(ticks))
    status.begin("started run s")
    first = read_status(config.run_dir)[0]
    assert (first.state, first.generation, first.event, first.best_fitness) == (
        "running", 0, "started run s", None)
    reader = Reader(config.run_dir)
    with SerialEvaluator() as evaluator:
        state = run.run(evaluator, observers=[status, reader])
    assert [s.generation for s in reader.seen] == [1, 2]
    assert all(s.state == "running" and s.cpus == 1 and s.idle_cores > 0 for s in reader.seen)
    assert reader.seen[0].event == "gen 1 of 2 checkpointed"
    # one generation left at the mean pace so far, then none
    assert reader.seen[0].eta_seconds == pytest.approx(reader.seen[0].generation_seconds)
    assert reader.seen[1].eta_seconds == 0
    assert reader.seen[-1].updated > reader.seen[0].updated  # the test's clock, not the wall's
    final, path = read_status(config.run_dir)
    assert path == config.run_dir / ckpt.STATUS_FILE
    assert final.state == "done" and final.generation == 2 and final.games == state.games
    assert final.best_fitness == state.elites[0].fitness
    assert final.event.startswith("reached max_generations (2); validated")
    assert (final.pid, final.host, final.started) == (status.pid, this_host(), 1000)


def test_the_idle_cores_leave_out_the_games_kept_from_an_earlier_sitting(tmp_path):
    """A resumed generation: 30 game-seconds and 30e6 positions, of which 12 s kept from an
    earlier sitting; 18 s played in its 10 s of wall on 2 CPUs. All its positions over those
    10 s would be 3 idle cores' work on 2 CPUs."""
    config = parse_config(config_dict(tmp_path), "s.yaml")
    run = TuningRun.start(config, config.run_dir, progress=False)
    run.state.generation, run.state.seconds = 1, 10.0
    status = LiveStatus(config, run.store, run.state, idle_rate=1e6)
    spent = Spent(games=30, seconds=30.0, positions=30_000_000, kept=12, kept_seconds=12.0)
    machines = {"cpus": 2, "seconds": 10.0, "share": 0.9}
    status.generation_ended(GenerationRecord(1, [], [], [], spent, {}, machines, 10.0, False),
                            run.state)
    assert read_status(config.run_dir)[0].idle_cores == pytest.approx(1.8)


def test_the_status_changes_nothing_the_run_computes(tmp_path):
    produced = []
    config = parse_config(config_dict(tmp_path), "s.yaml")
    for watched in (False, True):
        shutil.rmtree(config.run_dir, ignore_errors=True)
        run = TuningRun.start(config, config.run_dir, progress=False)
        observers = [LiveStatus(config, run.store, run.state, 1e6)] if watched else []
        with SerialEvaluator() as evaluator:
            run.run(evaluator, observers=observers)
        produced.append({name: (config.run_dir / name).read_bytes() for name in (
            ckpt.HISTORY_FILE, ckpt.VALIDATION_FILE, ckpt.BEST_FILE)})
    assert produced[0] == produced[1]


class Games(SerialEvaluator):
    """This process's games, with ``before_generation(n)`` called as generation n starts."""

    def __init__(self, before_generation):
        super().__init__()
        self.before_generation = before_generation
        self.calls = 0

    def run(self, jobs, schedule, progress=None):
        self.calls += 1
        self.before_generation(self.calls)
        return super().run(jobs, schedule, progress)


def stop_at_2(run_dir):
    def act(generation):
        if generation == 2:
            request_stop(run_dir)
    return act


def interrupt_at_2(run_dir):
    def act(generation):
        if generation == 2:
            raise KeyboardInterrupt
    return act


def fail_at_2(run_dir):
    def act(generation):
        if generation == 2:
            raise EvaluationError("no CPU left in the cluster")
    return act


@pytest.mark.parametrize("act, code, state, event", [
    (stop_at_2, 0, "stopped", "stopped on request after generation 2 (tune stop)"),
    (interrupt_at_2, 130, "interrupted", "interrupted after generation 1"),
    (fail_at_2, 1, "failed", "stopped after generation 1: no CPU left in the cluster"),
], ids=["stopped", "interrupted", "failed"])
def test_the_job_writes_how_it_ended(tmp_path, monkeypatch, capsys, act, code, state, event):
    from tuner.cluster import ray_evaluator

    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(config_dict(tmp_path, generations=4)), encoding="utf-8")
    run_dir = tmp_path / "s"
    monkeypatch.setattr(ray_evaluator, "evaluator_for",
                        lambda *args, **kwargs: Games(act(run_dir)))
    assert main(["run", str(path)]) == code
    written = json.loads((run_dir / ckpt.STATUS_FILE).read_text(encoding="utf-8"))
    assert (written["state"], written["event"]) == (state, event)
    assert written["idle_rate"] > 0  # the one-core calibration, measured as the job started
    capsys.readouterr()
    assert main(["status", str(run_dir)]) == 3
    out = capsys.readouterr().out
    assert out.startswith(f"{run_dir}: {state}\n") and f"tune resume {run_dir}" in out
