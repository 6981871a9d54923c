"""The real command line: `tune --config` on Ray and in its own process, determinism across
worker counts, `tune report`, and the tuned weights loading into the engine."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import EXIT_RAY_GUARD, JobsEvaluator, made_once, run_tune

from engine import Solver, read_weights, write_weights
from tuner.cli.main import main
from tuner.cluster.ray_evaluator import ON_RAY_WORKERS

ROOT = Path(__file__).resolve().parents[3]


def tune(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_tune(list(args), cwd, None, timeout=600)


IN_THIS_PROCESS = "games in this process (1 CPU): fewer than starting Ray would pay for; on Ray:"


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """configs/quick.yaml, as shipped, run once as the README runs it (too small for Ray: on
    the 1 CPU of its own process) and once on Ray with 2 workers, once for the session (tests
    that change a run work on a copy)."""
    def run_both(work: Path) -> None:
        config = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
        for workers in (1, 2):
            config["run"]["name"] = f"quick-w{workers}"
            path = work / f"quick-w{workers}.yaml"
            path.write_text(yaml.safe_dump(config))
            on_ray = ["--workers", "2"] if workers == 2 else []
            done = tune("--config", str(path), *on_ray, cwd=work)
            assert done.returncode == 0, done.stderr
            assert (IN_THIS_PROCESS in done.stderr) == (workers == 1)

    work = made_once(tmp_path_factory, "quick-runs", run_both)
    return {workers: work / "outputs" / f"quick-w{workers}" for workers in (1, 2)}


@pytest.mark.ray
def test_quick_run_writes_a_validated_weights_file_the_engine_plays(quick_runs):
    run_dir = quick_runs[2]
    for name in ("config.yaml", "checkpoint.pkl", "history.csv", "best.yaml", "validation.csv",
                 "run.log"):
        assert (run_dir / name).is_file(), name
    log = (run_dir / "run.log").read_text()  # --quiet quiets the terminal, not the log
    assert " run quick-w2: family classic" in log and " gen 5 of 5 " in log and " done: " in log
    best = read_weights(run_dir / "best.yaml")
    assert best.family == "classic" and best.depth == 1
    assert best.provenance["status"] == "validated"
    assert best.provenance["validation_games"] == 64
    low, high = best.provenance["validation_ci95"]
    assert low < best.provenance["validation_mean_score"] < high
    result = Solver.from_file(run_dir / "best.yaml").play(seed=3)
    assert result.moves > 100 and result.score > 1000
    history = (run_dir / "history.csv").read_text().splitlines()
    assert len(history) == 1 + 5  # header and one row per generation


@pytest.mark.ray
def test_a_run_too_small_for_ray_plays_without_it_and_says_how_to_play_it_on_ray(quick_runs,
                                                                                tmp_path,
                                                                                no_ray):
    """With Ray's stand-in first on the import path the run goes to its end: it never imports
    Ray. The command it gives plays the same run on Ray (the stand-in stops it there)."""
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    done = run_tune(["run", "configs/quick.yaml"], tmp_path, no_ray)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    hint = lines[lines.index(IN_THIS_PROCESS) + 1]
    assert hint == f"  tune run configs/quick.yaml --overwrite --workers {ON_RAY_WORKERS}"
    assert lines[lines.index(IN_THIS_PROCESS) + 2].startswith("price: at most 976 games ")
    run_dir = tmp_path / "outputs" / "quick"
    assert (run_dir / "history.csv").read_text() == (quick_runs[1] / "history.csv").read_text()
    on_ray = run_tune(hint.split()[1:], tmp_path, no_ray)
    assert on_ray.returncode == EXIT_RAY_GUARD, on_ray.stderr
    assert IN_THIS_PROCESS not in on_ray.stderr


def test_a_small_run_given_workers_plays_on_ray(tmp_path, no_ray):
    shutil.copytree(ROOT / "configs", tmp_path / "configs")
    done = run_tune(["run", "configs/quick.yaml", "--workers", "1"], tmp_path, no_ray)
    assert done.returncode == EXIT_RAY_GUARD, done.stderr


@pytest.mark.ray
def test_trajectory_is_identical_in_this_process_and_on_two_workers(quick_runs):
    one, two = quick_runs[1], quick_runs[2]
    assert (one / "history.csv").read_text() == (two / "history.csv").read_text()
    assert (one / "validation.csv").read_text() == (two / "validation.csv").read_text()
    assert read_weights(one / "best.yaml").weights == read_weights(two / "best.yaml").weights


@pytest.mark.ray
def test_report_prints_the_summary_and_plots_convergence_when_asked(quick_runs, tmp_path):
    run_dir = tmp_path / "quick-w2"
    shutil.copytree(quick_runs[2], run_dir)
    before = sorted(p.name for p in run_dir.iterdir())
    done = tune("report", str(run_dir), cwd=run_dir.parent)
    assert done.returncode == 0, done.stderr
    assert "validation (held-out seeds)" in done.stdout and "quick-w2" in done.stdout
    assert sorted(p.name for p in run_dir.iterdir()) == before  # nothing written unless asked
    done = tune("report", str(run_dir), "--plot", cwd=run_dir.parent)
    assert done.returncode == 0, done.stderr
    png = run_dir / "convergence.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {png}" in done.stdout


@pytest.mark.ray
def test_report_warns_about_a_winner_at_the_edge_of_its_box(quick_runs, tmp_path):
    run_dir = tmp_path / "edge"
    shutil.copytree(quick_runs[2], run_dir)
    best = read_weights(run_dir / "best.yaml")
    best.weights["merges_weight"] = 5000.0  # quick.yaml's box for it is [10, 5000]
    write_weights(run_dir / "best.yaml", best)
    done = tune("report", str(run_dir), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warnings = [ln for ln in done.stdout.splitlines() if ln.startswith("warning:")]
    assert ("warning: merges_weight = 5000 is at the upper end of its box (5000); "
            "the box may be what stopped it: widen it and tune again") in warnings


@pytest.mark.ray
def test_report_into_a_closed_pipe_ends_quietly(quick_runs):
    # `tune report RUN | head -0`: the reader has gone before the first line is written
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "tuner", "report", str(quick_runs[2])],
                              stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False)
    finally:
        os.close(write_end)
    assert done.stderr == ""  # no BrokenPipeError traceback
    assert done.returncode == 1


@pytest.mark.ray
def test_resuming_a_finished_run_says_so_and_changes_nothing(quick_runs, tmp_path):
    run_dir = tmp_path / "quick-w1"
    shutil.copytree(quick_runs[1], run_dir)
    before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.name != "run.log"}
    done = tune("--resume", str(run_dir), "--quiet", cwd=run_dir.parent)
    assert done.returncode == 0
    assert "finished" in done.stdout
    assert before == {p.name: p.read_bytes() for p in run_dir.iterdir() if p.name != "run.log"}


# ---- without Ray -------------------------------------------------------------------------------

def small_config(tmp_path: Path, **cmaes) -> Path:
    config = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    config["run"]["output_dir"] = str(tmp_path / "runs")
    config["search"]["depth"] = 0
    config["evaluation"]["games"] = 1
    config["cmaes"].update(popsize=4, max_generations=300, **cmaes)
    config["validation"] = {"games": 2, "top_k": 1}
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_resuming_a_run_that_pycma_stopped_says_it_cannot_continue(tmp_path, capsys):
    from engine.solver import GameResult
    from tuner.config import load_config
    from tuner.loop.run import TuningRun

    class Flat(JobsEvaluator):  # every candidate scores the same: pycma stops on a flat fitness
        workers = 1

        def play(self, jobs, progress=None):
            return [[GameResult(s, 1000, 128, 50, 0.001, 100, 0) for s in job.seeds]
                    for job in jobs]

    config = load_config(small_config(tmp_path))
    state = TuningRun.start(config, config.run_dir, progress=False).run(Flat())
    assert state.cma_stop and state.generation < 300
    before = {p.name: p.read_bytes() for p in config.run_dir.iterdir()}

    assert main(["--resume", str(config.run_dir), "--quiet"]) == 0
    out = capsys.readouterr().out
    criteria = state.cma_stop.removeprefix("cma-es termination: ")
    assert out.startswith(f"{config.run_dir}: the run has finished: pycma's own stop criteria "
                          f"ended it ({criteria}), so it cannot be continued")
    assert "max_generations" not in out
    assert before == {p.name: p.read_bytes() for p in config.run_dir.iterdir()}


def test_a_bug_is_a_traceback_not_bad_input(tmp_path, monkeypatch):
    from tuner.loop.run import TuningRun

    def bug(*args, **kwargs):
        raise ValueError("a bug in the run loop")

    monkeypatch.setattr(TuningRun, "start", bug)
    with pytest.raises(ValueError, match="a bug in the run loop"):
        main(["--config", str(small_config(tmp_path))])


@pytest.mark.subprocess
def test_a_bug_exits_1_with_its_traceback(tmp_path):
    driver = ("import sys\nimport tuner.loop.run\n"
              "def bug(*args, **kwargs):\n    raise ValueError('a bug in the run loop')\n"
              "tuner.loop.run.TuningRun.start = bug\n"
              "from tuner.cli.main import main\nsys.exit(main())\n")
    config = small_config(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", driver, "--config", str(config)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" in done.stderr and "ValueError: a bug in the run loop" in done.stderr
    assert "tune: error" not in done.stderr


def test_a_run_stopped_before_its_first_checkpoint_says_to_start_it_again(tmp_path, capsys,
                                                                          monkeypatch):
    import tuner.cluster.ray_evaluator
    from tuner.errors import EvaluationError

    def no_cluster(*args, **kwargs):
        raise EvaluationError("could not join the Ray cluster at 'head:6379'")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_cluster)
    config = small_config(tmp_path)
    assert main(["--config", str(config), "--workers", "2"]) == 1
    err = capsys.readouterr().err
    assert "stopped before the first generation completed: could not join" in err
    assert f"start it again with:\n  tune run {config} --workers 2" in err
    assert "resume" not in err
    assert not (tmp_path / "runs").exists()  # nothing left behind, not even the output folder
    # the advice works: the same command is not refused for the directory it left
    assert main(["--config", str(config), "--workers", "2"]) == 1
    assert "already holds a run" not in capsys.readouterr().err


@pytest.mark.ray
def test_a_run_at_a_depth_policy_records_it_in_its_config_and_its_weights(tmp_path):
    config = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    config["run"]["name"] = "budget"
    config["search"]["depth"] = {"nodes": 400}
    config["cmaes"]["max_generations"] = 2
    config["validation"]["games"] = 16
    path = tmp_path / "budget.yaml"
    path.write_text(yaml.safe_dump(config))
    done = tune("--config", str(path), "--workers", "1", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    run_dir = tmp_path / "outputs" / "budget"
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["search"]["depth"] == "nodes:400"
    best = yaml.safe_load((run_dir / "best.yaml").read_text())
    assert (best["version"], best["depth"]) == (2, "nodes:400")
    played = tune("play", "--weights", str(run_dir / "best.yaml"), "--games", "1", "--json",
                  cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert '"depth": "nodes:400"' in played.stdout


@pytest.mark.parametrize("slow", [True, False])
def test_a_long_engine_build_is_said_before_ray_starts(tmp_path, capsys, monkeypatch, slow):
    """Numba compiling the engine (half a minute after an install) was silence before the first
    line about Ray; loading it from the cache (a second) says nothing."""
    import time

    import tuner.cluster.ray_evaluator
    import tuner.games.throughput
    from engine.solver import PlayerSpec
    from tuner.errors import EvaluationError

    built = PlayerSpec.solver

    def build(spec):
        time.sleep(0.3)
        return built(spec)

    def no_cluster(*args, **kwargs):
        raise EvaluationError("no cluster in this test")

    monkeypatch.setattr(PlayerSpec, "solver", build)
    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_cluster)
    monkeypatch.setattr(tuner.games.throughput, "COMPILING_AFTER_SECONDS", 0.05 if slow else 60.0)
    assert main(["--config", str(small_config(tmp_path)), "--workers", "2"]) == 1
    err = capsys.readouterr().err
    said = "compiling the engine for this heuristic: tens of seconds the first time"
    assert (said in err) == slow
    assert err.index("no cluster in this test") > (err.index(said) if slow else 0)


def test_a_slow_start_of_ray_is_said_while_it_starts(tmp_path, capsys, monkeypatch):
    """Ray taking its time to start (or a cluster to answer) is said, not silence."""
    import logging
    import threading

    import tuner.cluster.ray_evaluator
    from tuner.errors import EvaluationError
    from tuner.games import progress

    heard = threading.Event()

    class Listener(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("starting Ray"):
                heard.set()

    def starting(*args, **kwargs):
        assert heard.wait(30), "nothing was said while Ray started"
        raise EvaluationError("no cluster in this test")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", starting)
    monkeypatch.setattr(progress, "SAY_AFTER_SECONDS", 0.0)
    listener, said_by = Listener(), logging.getLogger(progress.__name__)  # tune sets up "tuner"
    said_by.addHandler(listener)
    try:
        assert main(["--config", str(small_config(tmp_path)), "--workers", "2"]) == 1
    finally:
        said_by.removeHandler(listener)
    err = capsys.readouterr().err
    said = err.index("starting Ray on this machine, and its workers")
    assert said < err.index("no cluster in this test")
