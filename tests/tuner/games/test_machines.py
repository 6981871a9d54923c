"""What a run says about the machines: cluster.csv beside an unchanged history, the generation
lines, the report, `cmaes.popsize: auto` and `tune stop`."""

from __future__ import annotations

import contextlib
import csv
import logging
import shlex
import subprocess
import sys
from types import SimpleNamespace

import pytest
import yaml
from conftest import JobsEvaluator

from engine.solver import GameResult
from tuner.analysis.report import CLUSTER_COLUMNS, cluster_line, read_rows
from tuner.cli.main import main
from tuner.config import parse_config
from tuner.games.policy import FILL_GAMES, FILL_SECONDS, UnitSize, auto_popsize
from tuner.games.throughput import CpuTime
from tuner.loop import step
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import request_stop
from tuner.strategies.base import default_popsize


def config_dict(tmp_path, **cmaes) -> dict:
    return {
        "run": {"name": "m", "output_dir": str(tmp_path), "seed": 3},
        "family": "classic",
        "params": {
            "monotonicity_weight": {"init": 10, "low": 1, "high": 1000, "scale": "log"},
            "merges_weight": {"init": 100, "low": 10, "high": 10000, "scale": "log"},
        },
        "search": {"depth": 0, "cutoff": 0.0},
        "evaluation": {"games": 4},
        "cmaes": {"sigma0": 0.3, "popsize": 4, "max_generations": 3, **cmaes},
        "validation": {"games": 4, "top_k": 1},
    }


class Cluster(JobsEvaluator):
    """Games of 10 ms each, scored by the weights, on ``workers`` CPUs; ``on_call`` runs
    before each batch of games."""

    def __init__(self, workers: int = 8, on_call=None):
        self.workers = workers
        self.on_call = on_call or (lambda: None)

    def play(self, jobs, progress=None):
        self.on_call()
        return [[GameResult(s, int(job.spec.weights["merges_weight"]) + s % 97, 256, 50, 0.01,
                            100, 0) for s in job.seeds] for job in jobs]


def rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_the_machines_go_to_cluster_csv_and_the_history_stays_the_same_on_any_cluster(
        tmp_path, caplog):
    histories = []
    for workers in (1, 64):
        config = parse_config(config_dict(tmp_path / str(workers)), "m.yaml")
        with caplog.at_level(logging.INFO, logger="tuner.loop.run"):
            TuningRun.start(config, config.run_dir, progress=False).run(Cluster(workers))
        histories.append((config.run_dir / ckpt.HISTORY_FILE).read_text())
        machines = rows(config.run_dir / ckpt.CLUSTER_FILE)
        assert [r["generation"] for r in machines] == ["1", "2", "3"]
        assert {r["cpus"] for r in machines} == {str(workers)}
        for r in machines:  # 4 candidates x 4 games x 10 ms
            assert float(r["game_seconds"]) == pytest.approx(0.16)
            assert float(r["share"]) == pytest.approx(
                0.16 / (workers * float(r["seconds"])), rel=0.01, abs=1e-4)
        generation_lines = [m for m in caplog.messages if m.startswith("gen ")]
        assert generation_lines and all(f"{workers} CPU" in m and "% on games" in m
                                        for m in generation_lines)
        caplog.clear()
    assert histories[0] == histories[1]
    assert "cpus" not in histories[0] and "share" not in histories[0]


class Clock:
    """The generation step's ``time.perf_counter``, moved by the games alone."""

    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Changing(JobsEvaluator):
    """Batches of games of 0.5 s each on a cluster whose CPUs change before the batches that
    ``changes`` names (batch index: CPUs), as nodes leave and join: each batch keeps every CPU
    busy, moving ``clock`` by its games' seconds over the CPUs; the CPUs present are counted as
    the Ray evaluator counts them (``CpuTime``)."""

    def __init__(self, clock: Clock, cpus: int, changes: dict[int, int]):
        self.clock, self.changes, self.batches = clock, changes, 0
        self.workers = cpus
        self.present = CpuTime(cpus, clock())

    def play(self, jobs, progress=None):
        self.workers = self.changes.get(self.batches, self.workers)
        self.present.count(self.workers, self.clock())
        self.batches += 1
        results = [[GameResult(s, int(job.spec.weights["merges_weight"]) + s % 97, 256, 50, 0.5,
                               100, 0) for s in job.seeds] for job in jobs]
        self.clock.now += sum(r.seconds for games in results for r in games) / self.workers
        return results

    def cpu_seconds(self, start, end):
        return self.present.between(start, end)


def test_the_share_counts_the_cpus_for_the_time_they_were_there_so_never_exceeds_all(
        tmp_path, caplog, monkeypatch):
    """A generation's 4 batches of 2 CPU-seconds each: generation 2 loses a node of 1 CPU after
    its second batch, generation 3 gets it back after its second. Counted at the end,
    generation 2's 8 CPU-seconds of games would be 133% of 1 CPU x 6 s."""
    clock = Clock()
    monkeypatch.setattr(step, "time", SimpleNamespace(perf_counter=clock))
    config = parse_config(config_dict(tmp_path), "m.yaml")
    with caplog.at_level(logging.INFO, logger="tuner.loop.run"):
        TuningRun.start(config, config.run_dir, progress=False).run(
            Changing(clock, 2, {6: 1, 10: 2}))
    machines = rows(config.run_dir / ckpt.CLUSTER_FILE)
    assert [(r["cpus"], r["seconds"], r["game_seconds"], r["cpu_seconds"], r["share"])
            for r in machines] == [("2", "4.0", "8.0", "8.0", "1.0"),
                                   ("1", "6.0", "8.0", "8.0", "1.0"),
                                   ("2", "6.0", "8.0", "8.0", "1.0")]
    generation_lines = [m for m in caplog.messages if m.startswith("gen ")]
    assert [line.split("games/s  ")[1].split("  elapsed")[0] for line in generation_lines] == [
        "2 CPUs, 100% on games", "1 CPU, 100% on games", "2 CPUs, 100% on games"]


def test_the_report_sums_up_the_machines():
    machines = [{"generation": 1, "cpus": 2, "seconds": 10.0, "game_seconds": 18.0,
                 "share": 0.9},
                {"generation": 2, "cpus": 16, "seconds": 10.0, "game_seconds": 144.0,
                 "share": 0.9}]
    first, share = cluster_line(machines).splitlines()
    assert first == "cluster       2-16 CPUs, 2 generations recorded, 0:00:20 of wall time"
    assert share.strip().startswith("90% of their time on training games")  # not "0.00556 h"


def test_the_report_counts_the_cpu_seconds_present_and_reads_rows_written_before_them(
        tmp_path):
    """A run of 0.3 resumed by 0.4: its first row has no ``cpu_seconds`` (CPUs x seconds
    then); in the second a node of 1 CPU left after 4 of its 10 s."""
    path = tmp_path / ckpt.CLUSTER_FILE
    path.write_text(ckpt.rows_csv([
        {"generation": 1, "cpus": 2, "seconds": 10.0, "game_seconds": 18.0, "share": 0.9},
        {"generation": 2, "cpus": 1, "seconds": 10.0, "game_seconds": 14.0, "share": 1.0,
         "cpu_seconds": 14.0}]))
    machines = read_rows(path, CLUSTER_COLUMNS, required=True)
    assert cluster_line(machines).splitlines()[1].strip() == (
        "94% of their time on training games (100% after generation 1, which includes "
        "starting the workers)")


def test_report_prints_the_cluster_line_of_a_run(tmp_path, capsys):
    config = parse_config(config_dict(tmp_path), "m.yaml")
    TuningRun.start(config, config.run_dir, progress=False).run(Cluster(8))
    assert main(["report", str(config.run_dir)]) == 0
    assert "cluster       8 CPUs, " in capsys.readouterr().out


# ---- cmaes.popsize: auto ------------------------------------------------------------------


def test_auto_population_keeps_pycmas_default_on_a_small_cluster_and_grows_with_cpus():
    assert auto_popsize(2, 1, 512, 8, 10_000) == 8
    per_game = UnitSize.PRIOR_SECONDS[1]
    expected = -(-(FILL_SECONDS * 512) // (512 * per_game))
    assert auto_popsize(512, 1, 512, 8, 10_000) == expected
    assert auto_popsize(512, 3, 128, 8, 10_000) == -(-(FILL_GAMES * 512) // 128)
    assert auto_popsize(100_000, 1, 512, 8, 1_000) == 1_000


def test_auto_population_is_chosen_once_and_written_into_the_runs_config(tmp_path):
    config = parse_config(config_dict(tmp_path, popsize="auto", max_generations=1), "m.yaml")
    run = TuningRun.start(config, config.run_dir, progress=False)
    assert yaml.safe_load((config.run_dir / ckpt.CONFIG_FILE).read_text())["cmaes"][
        "popsize"] == "auto"
    run.run(Cluster(workers=4096))
    chosen = auto_popsize(4096, 0, 4, default_popsize(2), 10_000)
    assert chosen > default_popsize(2)
    stored = yaml.safe_load((config.run_dir / ckpt.CONFIG_FILE).read_text())
    assert stored["cmaes"]["popsize"] == chosen
    assert run.state.history[0]["popsize"] == chosen


@pytest.mark.parametrize("value, message", [
    ("autom", "expected an integer or auto, got 'autom'"),
    (1, "expected an integer from 2 to"),
])
def test_a_bad_popsize_is_one_line(tmp_path, value, message):
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(config_dict(tmp_path, popsize=value)), encoding="utf-8")
    assert main(["run", str(path)]) == 2
    assert not (tmp_path / "m").exists()


# ---- tune stop ----------------------------------------------------------------------------


def test_a_stop_request_ends_the_job_after_its_generation_checkpointed(tmp_path):
    config = parse_config(config_dict(tmp_path, max_generations=5), "m.yaml")
    run = TuningRun.start(config, config.run_dir, progress=False)
    asked = []

    def ask_once():
        if run.state.generation == 1 and not asked:
            asked.append(True)
            (run.run_dir / ckpt.STOP_FILE).write_text("stop\n")

    state = run.run(Cluster(on_call=ask_once))
    assert run.stopped_on_request and state.generation == 2 and not state.finished
    assert not (run.run_dir / ckpt.STOP_FILE).exists()
    assert not (run.run_dir / ckpt.VALIDATION_FILE).exists()
    assert ckpt.load_state(run.run_dir).generation == 2


def test_a_stop_requested_before_the_first_generation_stops_the_run_after_it(tmp_path):
    """Asked while the run starts (Ray starting, say): the run plays generation 1, so that it
    has a checkpoint to resume from, and stops."""
    config = parse_config(config_dict(tmp_path, max_generations=5), "m.yaml")
    run = TuningRun.start(config, config.run_dir, progress=False)
    (run.run_dir / ckpt.STOP_FILE).write_text("stop\n")
    state = run.run(Cluster())
    assert run.stopped_on_request and state.generation == 1 and not state.finished
    assert not (run.run_dir / ckpt.STOP_FILE).exists()
    assert ckpt.load_state(run.run_dir).generation == 1


def test_a_stop_request_while_the_run_validates_lets_it_finish_and_leaves_no_request(tmp_path):
    config = parse_config(config_dict(tmp_path, max_generations=2), "m.yaml")
    run = TuningRun.start(config, config.run_dir, progress=False)

    def ask_while_validating():
        if run.state.generation == 2:
            (run.run_dir / ckpt.STOP_FILE).write_text("stop\n")

    state = run.run(Cluster(on_call=ask_while_validating))
    assert state.finished and not run.stopped_on_request
    assert (run.run_dir / ckpt.VALIDATION_FILE).exists()
    assert not (run.run_dir / ckpt.STOP_FILE).exists()


LOCKER = """
import fcntl, os, sys, time
fds = [os.open(path, os.O_RDONLY | os.O_DIRECTORY) for path in sys.argv[1:]]
for fd in fds:
    fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


@contextlib.contextmanager
def held(*directories):
    """A process that holds the directories' locks as a running ``tune`` does (a run started
    with ``--overwrite`` holds its run directory and its staging directory)."""
    for directory in directories:
        directory.mkdir()
    holder = subprocess.Popen([sys.executable, "-c", LOCKER, *map(str, directories)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.subprocess
def test_tune_stop_asks_the_process_that_holds_the_run(tmp_path, capsys):
    run_dir = tmp_path / "run"
    with held(run_dir) as holder:
        assert main(["stop", str(run_dir)]) == 0
        out = capsys.readouterr().out
        assert f"asked tune process {holder.pid} to stop" in out
        assert f"tune resume {run_dir}" in out
        assert (run_dir / ckpt.STOP_FILE).is_file()


@pytest.mark.subprocess
def test_a_run_being_started_is_stopped_in_its_staging_directory(tmp_path):
    run_dir = tmp_path / "run"
    staging = tmp_path / ".run.new"
    with held(staging) as holder:
        assert request_stop(run_dir) == (staging, holder.pid)
        assert (staging / ckpt.STOP_FILE).is_file()


@pytest.mark.parametrize("exists", [True, False])
def test_tune_stop_with_nothing_running_is_one_line_and_writes_nothing(tmp_path, capsys, exists):
    run_dir = tmp_path / "run"
    if exists:
        run_dir.mkdir()
    assert main(["stop", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    expected = "no tune process is running this run" if exists else "no such run directory"
    assert len(err) == 1 and expected in err[0] and str(run_dir) in err[0]
    assert not exists or list(run_dir.iterdir()) == []


@pytest.mark.subprocess
def test_a_run_replacing_another_is_stopped_in_its_staging_directory(tmp_path):
    """``--overwrite``: the process holds the old run directory too, which it retires at its
    first checkpoint; a request written there would be lost with it."""
    run_dir, staging = tmp_path / "run", tmp_path / ".run.new"
    with held(run_dir, staging) as holder:
        assert request_stop(run_dir) == (staging, holder.pid)
        assert (staging / ckpt.STOP_FILE).is_file()
        assert not (run_dir / ckpt.STOP_FILE).exists()


# How a shell may name the run: (where the command runs, relative to the run directory; RUN_DIR;
# how the resume command is shown)
RUN_DIR_FORMS = {
    "dot": (".", ".", "tune resume ."),
    "dot-dot": ("inner", "..", "tune resume .."),
    "trailing-slash": ("..", "my run/", "tune resume 'my run'"),
    "spaces": ("..", "my run", "tune resume 'my run'"),
    "absolute": ("..", None, None),
}


@pytest.mark.parametrize("form", RUN_DIR_FORMS, ids=list(RUN_DIR_FORMS))
@pytest.mark.subprocess
def test_tune_stop_takes_the_run_directory_however_it_is_named(tmp_path, capsys, monkeypatch,
                                                                form):
    cwd, argument, resume = RUN_DIR_FORMS[form]
    run_dir = tmp_path / "my run"
    with held(run_dir) as holder:
        (run_dir / "inner").mkdir()
        monkeypatch.chdir(run_dir / cwd)
        assert main(["stop", argument or str(run_dir)]) == 0
        out = capsys.readouterr().out
        assert f"asked tune process {holder.pid} to stop" in out
        assert f"({resume or 'tune resume ' + shlex.quote(str(run_dir))})" in out
        assert (run_dir / ckpt.STOP_FILE).is_file()


def test_tune_stop_in_a_directory_nothing_runs_in_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["stop", "."]) == 2
    assert capsys.readouterr().err == (
        "tune: error: .: no tune process is running this run: nothing to stop\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("argument", "expected"), [
    ("", "RUN_DIR: expected the directory of a running run, got ''"),
    ("run.yaml", "run.yaml: is not a directory: expected the directory of a running run"),
])
def test_tune_stop_refuses_what_is_not_a_directory_in_one_line(tmp_path, capsys, monkeypatch,
                                                               argument, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("run: {}\n")
    before = list(tmp_path.iterdir())
    assert main(["stop", argument]) == 2
    assert capsys.readouterr().err == f"tune: error: {expected}\n"
    assert list(tmp_path.iterdir()) == before


def test_tune_stop_from_a_working_directory_that_was_removed_is_one_line(tmp_path, capsys,
                                                                          monkeypatch):
    gone = tmp_path / "replaced"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()  # a run replaced by --overwrite, say, while a shell was in it
    assert main(["stop", "."]) == 2
    assert capsys.readouterr().err == (
        "tune: error: .: the working directory no longer exists\n")
