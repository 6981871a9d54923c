"""``tune status``: alive, dead, not heard from, ended, from fake processes and hosts; bad
input in one line; ``tune report`` on a live run; the throughput arithmetic."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from tuner.analysis.liveness import Host, Verdict, ago, judge, status_lines
from tuner.analysis.report import cluster_line
from tuner.cli.main import main
from tuner.games import throughput
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import staging_path
from tuner.store.status_file import RunStatus, process_start, status_text, this_host

NOW = 1_800_000_000.0
STATUS = RunStatus(
    run="r", state="running", pid=4242, host="node-1", process_start=777, generation=3,
    max_generations=20, games=432, best_fitness=8123.0, best_stderr=200.0, best_generation=2,
    fitness="mean_score", cpus=16, share=0.95, idle_cores=12.5, idle_rate=2e7,
    generation_seconds=30.0, eta_seconds=510.0, event="gen 3 of 20 checkpointed",
    started=NOW - 100, updated=NOW - 10)


def on(name: str, pids: dict[int, int]) -> Host:
    """A host called ``name`` whose processes are ``pids`` (id: start time)."""
    return Host(name, exists=lambda pid: pid in pids, started=pids.get)


def test_a_process_alive_on_its_host_is_running():
    verdict, words = judge(STATUS, NOW, on("node-1", {4242: 777}))
    assert verdict is Verdict.RUNNING and verdict.exit_code == 0
    assert words == "running (pid 4242 on node-1, alive; last heard 10 s ago)"


@pytest.mark.parametrize("pids", [{}, {4242: 999}], ids=["gone", "id-reused"])
def test_a_process_gone_from_its_host_without_a_final_state_is_dead(tmp_path, pids):
    run_dir = tmp_path / "my run"
    verdict, lines = status_lines(STATUS, run_dir / ckpt.STATUS_FILE, run_dir, NOW,
                                  on("node-1", pids))
    assert verdict is Verdict.DEAD and verdict.exit_code == 4
    assert lines[0] == (f"{run_dir}: dead: pid 4242 on node-1 is gone without saying it ended "
                        "(killed, or the machine restarted); last heard 10 s ago")
    assert lines[-1] == f"  resume with: tune resume '{run_dir}'"
    assert not any("ETA" in line for line in lines)  # a dead run ends nowhere


def test_a_dead_run_without_a_checkpoint_has_nothing_to_resume(tmp_path):
    run_dir = tmp_path / "r"
    _, lines = status_lines(STATUS, staging_path(run_dir) / ckpt.STATUS_FILE, run_dir, NOW,
                            on("node-1", {}))
    assert lines[-1].startswith("  nothing to resume: it had no checkpoint yet")


def test_another_host_is_judged_by_the_files_age():
    here = on("laptop", {4242: 777})  # the same id here means nothing
    assert judge(STATUS, NOW, here) == (
        Verdict.RUNNING, "running (pid 4242 on node-1, another host: last heard 10 s ago)")
    late = NOW + 2 * 30 + 120 + 1  # two generations and two minutes without a word
    verdict, words = judge(STATUS, late, here)
    assert verdict is Verdict.DEAD and words.startswith(
        "not heard from: pid 4242 on node-1, last heard 3 min ago, while a generation takes "
        "about 0:00:30: it may have died")
    before_generation_1 = dataclasses.replace(STATUS, generation_seconds=None)
    assert judge(before_generation_1, NOW + 3600, here)[0] is Verdict.RUNNING


@pytest.mark.parametrize("state, last", [
    ("done", "  see: tune report {}"),
    ("stopped", "  resume with: tune resume {}"),
    ("interrupted", "  resume with: tune resume {}"),
    ("failed", "  resume with: tune resume {}"),
])
def test_an_ended_run_says_how_it_ended_and_what_to_do(tmp_path, state, last):
    ended = dataclasses.replace(STATUS, state=state)
    verdict, lines = status_lines(ended, tmp_path / ckpt.STATUS_FILE, tmp_path, NOW,
                                  on("node-1", {}))
    assert verdict is Verdict.ENDED and verdict.exit_code == 3
    assert lines[0] == f"{tmp_path}: {state}" and lines[-1] == last.format(tmp_path)
    assert "ETA" not in "\n".join(lines)


ON_A_CLUSTER = {"config": "/home/me/edited.yaml", "family_changed": False, "workers": 2,
               "address": "10.0.0.1:6379"}


@pytest.mark.parametrize("state, local", [("stopped", False), ("failed", True),
                                          ("running", True)], ids=["stopped", "failed", "dead"])
def test_the_resume_command_carries_the_jobs_options(tmp_path, state, local):
    """As the job said it (``status.json`` keeps its options); a run on a cluster that failed
    or died is offered this machine too."""
    ended = dataclasses.replace(STATUS, state=state, resume=ON_A_CLUSTER)
    _, lines = status_lines(ended, tmp_path / ckpt.STATUS_FILE, tmp_path, NOW, on("node-1", {}))
    resume = (f"tune resume {tmp_path} --config /home/me/edited.yaml --workers 2 --address "
              "10.0.0.1:6379")
    here = f"tune resume {tmp_path} --config /home/me/edited.yaml --workers 2 --address local"
    expected = [f"  resume with: {resume}"] + ([f"  or on this machine: {here}"] if local else [])
    assert lines[-len(expected):] == expected and lines[-len(expected) - 1].startswith("  last")


def test_a_pending_stop_is_shown_while_the_run_works(tmp_path):
    status_path = tmp_path / ckpt.STATUS_FILE
    alive = on("node-1", {4242: 777})
    assert not any("stop requested" in line
                   for line in status_lines(STATUS, status_path, tmp_path, NOW, alive)[1])
    (tmp_path / ckpt.STOP_FILE).write_text("stop requested by process 1\n")
    os.utime(tmp_path / ckpt.STOP_FILE, (NOW - 5, NOW - 5))
    verdict, lines = status_lines(STATUS, status_path, tmp_path, NOW, alive)
    assert verdict is Verdict.RUNNING
    assert lines[-1] == ("  stop requested 5 s ago (tune stop): it stops once its current "
                         "generation is checkpointed")
    _, dead = status_lines(STATUS, status_path, tmp_path, NOW, on("node-1", {}))
    assert not any("stop requested" in line for line in dead)  # no job left to stop


def test_the_status_lines_give_the_figures_and_the_eta_from_now():
    _, lines = status_lines(STATUS, Path(ckpt.STATUS_FILE), Path("."), NOW,
                            on("node-1", {4242: 777}))
    assert lines[1:] == [
        ("  3 of 20 generations done, 432 training games; best training fitness 8,123 +/- 392 "
        "(95% CI, generation 2)"),
        ("  16 CPUs, 95% of their time on games, the work of 12.5 idle cores, a generation "
        "takes 0:00:30, ETA 0:08:20"),  # 510 s at the update, 10 s ago
        "  last event: gen 3 of 20 checkpointed (10 s ago)",
    ]
    assert (ago(59), ago(150), ago(3 * 3600 + 5 * 60)) == ("59 s", "2 min", "3 h 05 min")


# ---- the command ---------------------------------------------------------------------------


def write_status(run_dir, **changes):
    run_dir.mkdir(exist_ok=True)
    if not (run_dir / ckpt.CONFIG_FILE).exists():
        (run_dir / ckpt.CONFIG_FILE).write_text("run: {}\n", encoding="utf-8")
    status = dataclasses.replace(STATUS, **changes)
    (run_dir / ckpt.STATUS_FILE).write_text(status_text(status), encoding="utf-8")


def test_tune_status_of_this_very_process_says_running(tmp_path, capsys):
    import time

    write_status(tmp_path, pid=os.getpid(), host=this_host(),
                 process_start=process_start(os.getpid()), updated=time.time())
    assert main(["status", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith(f"{tmp_path}: running (pid {os.getpid()} on ")


def damaged(text):
    return lambda run_dir: (run_dir / ckpt.STATUS_FILE).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("make, expected", [
    (lambda run_dir: None, "{}: no such run directory"),
    (lambda run_dir: run_dir.mkdir(), "{}: not a run directory (no config.yaml)"),
    (lambda run_dir: run_dir.write_text("x"), "{}: is not a directory"),
    (lambda run_dir: (run_dir.mkdir(), (run_dir / ckpt.CONFIG_FILE).write_text("run: {}\n")),
     "{}: no status.json"),
    (lambda run_dir: (write_status(run_dir), damaged('{"format": 1, "sta')(run_dir)),
     "{}/status.json: damaged: not JSON"),
    (lambda run_dir: (write_status(run_dir), damaged('{"format": 1}')(run_dir)),
     "{}/status.json: damaged: run: expected str, got None"),
    (lambda run_dir: write_status(run_dir, state="sleeping"),
     "{}/status.json: damaged: state: expected one of running, stopped"),
    (lambda run_dir: write_status(run_dir, pid=0), "{}/status.json: damaged: pid"),
    (lambda run_dir: write_status(run_dir, resume={"workers": "2"}),
     "{}/status.json: damaged: resume: workers: expected a count or null, got '2'"),
    (lambda run_dir: write_status(run_dir, resume={"nodes": 2}),
     "{}/status.json: damaged: resume: unknown option 'nodes'"),
], ids=["missing", "not-a-run", "a-file", "no-status", "torn", "keys", "state", "pid",
        "resume-option", "resume-unknown"])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, make, expected):
    run_dir = tmp_path / "r"
    make(run_dir)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main(["status", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"tune: error: {expected.format(run_dir)}")
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_tune_report_on_a_live_run_shows_the_status_lines(tmp_path, capsys):
    from tuner.config import parse_config
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.run import TuningRun

    config = parse_config({
        "run": {"name": "m", "output_dir": str(tmp_path), "seed": 3}, "family": "classic",
        "params": {"merges_weight": {"init": 100, "low": 10, "high": 10000, "scale": "log"},
                   "empty_weight": {"init": 100, "low": 10, "high": 5000, "scale": "log"}},
        "search": {"depth": 0, "cutoff": 0.0}, "evaluation": {"games": 2},
        "cmaes": {"popsize": 4, "max_generations": 2}, "validation": {"games": 2, "top_k": 1},
    }, "m.yaml")
    with SerialEvaluator() as evaluator:
        TuningRun.start(config, config.run_dir, progress=False).run(evaluator)
    (config.run_dir / ckpt.VALIDATION_FILE).unlink()  # as it stands before the validation
    write_status(config.run_dir, host="node-1", pid=4242)
    assert main(["report", str(config.run_dir)]) == 0
    out = capsys.readouterr().out
    assert f"\n\n{config.run_dir}: running (pid 4242 on node-1, another host: last heard" in out
    assert "the work of " in out  # the status's calibration reached the report's cluster lines
    write_status(config.run_dir, state="done")
    assert main(["report", str(config.run_dir)]) == 0
    assert "pid 4242" not in capsys.readouterr().out


# ---- throughput ----------------------------------------------------------------------------


def test_the_throughput_figures():
    # 16 CPUs at 95% of their time on games that run 1.22 times slower than on an idle core:
    # 12.5 idle cores' work, not 15.2
    idle_rate, wall = 1e6, 10.0
    positions = 16 * 0.95 * wall * idle_rate / 1.22
    assert throughput.idle_cores(positions, wall, idle_rate) == pytest.approx(12.46, abs=0.01)
    assert throughput.idle_cores(positions, wall, None) is None
    assert throughput.share(152.0, 16 * wall) == pytest.approx(0.95)
    assert throughput.share(1.0, 0.0) == 0.0


def test_the_report_says_the_share_with_and_without_generation_1_and_the_idle_cores():
    machines = [{"generation": 1.0, "cpus": 2, "seconds": 20.0, "game_seconds": 4.0,
                 "share": 0.1},
                {"generation": 2.0, "cpus": 2, "seconds": 10.0, "game_seconds": 16.0,
                 "share": 0.8},
                {"generation": 3.0, "cpus": 2, "seconds": 10.0, "game_seconds": 16.0,
                 "share": 0.8}]
    history = [{"generation": 1.0, "positions": 4e6}, {"generation": 2.0, "positions": 16e6},
               {"generation": 3.0, "positions": 16e6}]
    assert cluster_line(machines, history, idle_rate=1e6).splitlines() == [
        "cluster       2 CPUs, 3 generations recorded, 0:00:40 of wall time",
        ("              45% of their time on training games (80% after generation 1, which "
        "includes starting the workers)"),
        ("              the work of 0.9 idle cores (positions searched per second, against one "
        "idle core's)"),
    ]
    assert len(cluster_line(machines, history).splitlines()) == 2  # no calibration: no figure


def test_a_resumed_generations_kept_games_lift_neither_the_share_nor_the_idle_cores():
    """Generation 2 resumed: 30 game-seconds, of which 12 kept from an earlier sitting and 18
    played in its 10 s on 2 CPUs (its ``share``, 90%). Counted whole, its games would be 150% of
    the CPUs' time and its positions 3 idle cores' work on 2 CPUs."""
    machines = [{"generation": 1.0, "cpus": 2, "seconds": 10.0, "game_seconds": 20.0,
                 "share": 1.0},
                {"generation": 2.0, "cpus": 2, "seconds": 10.0, "game_seconds": 30.0,
                 "share": 0.9, "cpu_seconds": 20.0}]
    history = [{"generation": 1.0, "positions": 20e6}, {"generation": 2.0, "positions": 30e6}]
    assert cluster_line(machines, history, idle_rate=1e6).splitlines()[1:] == [
        ("              95% of their time on training games (90% after generation 1, which "
         "includes starting the workers)"),
        ("              the work of 1.9 idle cores (positions searched per second, against one "
         "idle core's)"),
    ]
    assert throughput.positions_here(30e6, 30.0, 18.0) == pytest.approx(18e6)
    assert throughput.positions_here(0.0, 0.0, 0.0) == 0.0


def test_a_calibration_measures_one_core_at_the_runs_settings():
    from engine.solver import PlayerSpec

    assert throughput.calibrate(PlayerSpec("classic", None, 0), seconds=0.05) > 0
