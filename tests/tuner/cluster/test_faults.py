"""Faults: dead workers, removed nodes, a killed or signalled driver. A run keeps going where it
can, stops cleanly where it cannot, and its history always equals an undisturbed run's."""

from __future__ import annotations

import contextlib
import csv
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import made_once
from ray.cluster_utils import Cluster

from engine import read_weights
from engine.atomic import is_temp_file
from tuner.cli.main import main
from tuner.config import parse_config
from tuner.games.evaluation import SerialEvaluator
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import request_stop, staging_path

pytestmark = [pytest.mark.slow, pytest.mark.ray]  # a few minutes: real runs killed and resumed

# Depth 2 and one game per task make tasks long enough (about 0.1 s) to be caught mid-flight.
CONFIG = {
    "run": {"name": "faults", "output_dir": "runs", "seed": 21},
    "family": "classic",
    "params": {
        "lost_penalty": {"fixed": 200000},
        "merges_weight": {"init": 700, "low": 10, "high": 10000, "scale": "log"},
        "empty_weight": {"init": 270, "low": 10, "high": 10000, "scale": "log"},
    },
    "search": {"depth": 2, "cutoff": 0.001},
    "evaluation": {"games": 4},
    "cmaes": {"sigma0": 0.2, "popsize": 4, "max_generations": 3},
    "ray": {"games_per_task": 1, "max_retries": 3, "no_worker_timeout": 4},
    "validation": {"games": 2, "top_k": 1},
}
ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def played_once(tmp_path_factory, name: str, document: dict) -> Path:
    """The run of ``document``, played in process once for the whole session."""
    def play(folder: Path) -> None:
        config = parse_config(document, name)
        TuningRun.start(config, folder / "faults", progress=False).run(SerialEvaluator(1))

    return made_once(tmp_path_factory, f"faults-{name}", play) / "faults"


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The undisturbed run, played in process: what every disturbed run must reproduce."""
    return played_once(tmp_path_factory, "reference", CONFIG)


# Adaptive games that, with this config, race in some generations and not in others.
ADAPTIVE_GAMES = {"min": 4, "max": 12, "batch": 4, "confidence": 0.5, "tolerance": 0.3}


@pytest.fixture(scope="module")
def adaptive_reference(tmp_path_factory) -> Path:
    """The undisturbed run with adaptive games, played in process."""
    return played_once(tmp_path_factory, "adaptive-reference", config_document(ADAPTIVE_GAMES))


def config_document(games: int | dict | None = None, **ray_options) -> dict:
    document = yaml.safe_load(yaml.safe_dump(CONFIG))
    document["ray"].update(ray_options)
    if games is not None:
        document["evaluation"]["games"] = games
    return document


def write_config(tmp_path: Path, games: int | dict | None = None, **ray_options) -> Path:
    document = config_document(games, **ray_options)
    path = tmp_path / "faults.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


# A shell that starts a job in the background (`.ci/run &`) makes its children ignore SIGINT;
# the driver restores Python's handler first, so that it sees Ctrl-C as a terminal delivers it.
CTRL_C_AS_IN_A_TERMINAL = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"
# main() with no argument, as the installed `tune` calls it: the process is the command, and a
# second Ctrl-C that comes while it exits is ignored (main(argv) is the command run in-process).
TUNE_MAIN = "import sys; from tuner.cli.main import main; sys.exit(main())"


def start_tune(tmp_path: Path, *args: str, driver: str | None = None,
               own_group: bool = False) -> subprocess.Popen:
    """``own_group``: in a process group of its own (its id is the driver's pid), so that every
    process the run starts can be found, as a terminal's job control would do."""
    command = [sys.executable, "-c", CTRL_C_AS_IN_A_TERMINAL + (driver or TUNE_MAIN), *args]
    return subprocess.Popen(command, cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=own_group)


def generations_done(run_dir: Path) -> int:
    try:
        return max(len((run_dir / "history.csv").read_text().splitlines()) - 1, 0)
    except FileNotFoundError:
        return 0


def wait_for(condition, timeout: float = 120.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def busy_worker_pids() -> list[int]:
    """Ray worker processes of this test's clusters (descendants of this process: the machine
    may run other Rays) running a unit of games right now (Ray names them ray::play_unit)."""
    out = subprocess.run(["ps", "-eo", "pid=,ppid=,args="], capture_output=True, text=True,
                         check=True).stdout
    parents, busy = {}, []
    for line in out.splitlines():
        pid, ppid, *args = line.split(None, 2)
        parents[int(pid)] = int(ppid)
        if args and args[0].startswith("ray::play_unit"):
            busy.append(int(pid))

    def ours(pid: int) -> bool:
        while pid > 1 and pid != os.getpid():
            pid = parents.get(pid, 0)
        return pid == os.getpid()

    return [pid for pid in busy if ours(pid)]


def processes_in_group(group: int) -> list[str]:
    """The live processes (not zombies) of a process group, as ps lists them."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,stat=,args="], capture_output=True, text=True,
                         check=True).stdout
    return [line.strip() for line in out.splitlines()
            if int(line.split()[1]) == group and not line.split()[2].startswith("Z")]


def assert_nothing_left(group: int, timeout: float = 20.0) -> None:
    """Every process of the group has ended (Ray's shutdown may take a moment)."""
    deadline = time.monotonic() + timeout
    while processes_in_group(group) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not processes_in_group(group)


def assert_same_run(run_dir: Path, reference: Path) -> None:
    assert (run_dir / "history.csv").read_text() == (reference / "history.csv").read_text()
    assert (run_dir / "validation.csv").read_text() == (reference / "validation.csv").read_text()
    assert read_weights(run_dir / "best.yaml").weights == read_weights(
        reference / "best.yaml").weights


def assert_consistent_files(run_dir: Path) -> None:
    """Every file that matters is complete: it parses, whichever version it holds."""
    state = ckpt.load_state(run_dir)
    rows = (run_dir / "history.csv").read_text().splitlines()
    assert len(rows) - 1 in (state.generation, state.generation + 1)
    if state.generation:
        read_weights(run_dir / "best.yaml")
    yaml.safe_load((run_dir / "config.yaml").read_text())


# ---- a multi-node cluster on this machine ----------------------------------------------------

@pytest.fixture(scope="module")
def one_cluster():
    """A head without CPUs, started once for the module's tests (a start costs seconds), and
    the one-CPU nodes the tests begin with."""
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    yield cluster, []
    cluster.shutdown()


@pytest.fixture
def cluster(one_cluster):
    """The module's cluster as every test begins with it: two nodes of one CPU beside the head.
    Nodes a test added go, and nodes it removed are replaced."""
    cluster, nodes = one_cluster
    nodes[:] = [node for node in nodes if node in cluster.worker_nodes]
    for node in list(cluster.worker_nodes):
        if node not in nodes:
            cluster.remove_node(node)
    nodes += [cluster.add_node(num_cpus=1) for _ in range(2 - len(nodes))]
    cluster.wait_for_nodes()
    return cluster, list(nodes)


def test_killed_worker_is_retried_and_the_run_is_unchanged(cluster, tmp_path, reference):
    cluster, _nodes = cluster
    config = write_config(tmp_path)
    proc = start_tune(tmp_path, "--config", str(config), "--address", cluster.address, "--quiet")
    run_dir = tmp_path / "runs" / "faults"
    wait_for(lambda: generations_done(run_dir) >= 1 and busy_worker_pids(), what="generation 2")
    killed = busy_worker_pids()[0]
    os.kill(killed, signal.SIGKILL)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert_same_run(run_dir, reference)
    assert f" Ray worker {killed} on " in err and " was lost and is played again (" in err
    assert "(raylet)" not in out + err  # Ray's own messages: in run.log only


def test_removed_node_is_survived_and_the_run_is_unchanged(cluster, tmp_path, adaptive_reference):
    """Racing games; with a fixed number of games, a node killed mid-run is
    test_a_killed_node_is_one_line_and_the_run_resumes_elsewhere_unchanged."""
    cluster, nodes = cluster
    config = write_config(tmp_path, ADAPTIVE_GAMES)
    proc = start_tune(tmp_path, "--config", str(config), "--address", cluster.address, "--quiet")
    run_dir = tmp_path / "runs" / "faults"
    wait_for(lambda: generations_done(run_dir) >= 1 and busy_worker_pids(), what="generation 2")
    started = time.monotonic()
    cluster.remove_node(nodes[1])
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert len([line for line in err.splitlines() if " left: -1 CPU, 1 CPU now" in line]) == 1
    print(f"run finished {time.monotonic() - started:.1f} s after a node was removed")
    assert_same_run(run_dir, adaptive_reference)
    shares = [float(row["share"]) for row in csv.DictReader(
        (run_dir / ckpt.CLUSTER_FILE).read_text().splitlines())]
    assert max(shares) <= 1.0  # the CPUs counted for the time they were there


# ---- a two-node cluster started with `ray start`, as docs/cluster.md says -------------------------

RAY = str(Path(sys.executable).with_name("ray"))
# A killed node is declared dead after 3 failed health checks a second apart (Ray's defaults:
# 5, 3 s apart), so that its tasks are played again sooner; a check still waits 10 s for a
# node that is only slow.
HEALTH_CHECKS = {"RAY_health_check_period_ms": "1000", "RAY_health_check_failure_threshold": "3"}


def ray_start(log: Path, *args: str) -> subprocess.Popen:
    """A node, `ray start ... --block` in a session of its own: ended by its pid (SIGTERM ends
    the node's processes), never by `ray stop`, which ends every Ray of the machine. Ray's
    files go to a folder of the test's (RAY_TMPDIR; short: it holds Ray's sockets), where no
    other Ray looks for the cluster it joins."""
    with log.open("w") as out:
        return subprocess.Popen([RAY, "start", "--node-ip-address", "127.0.0.1", "--num-cpus",
                                 "1", "--disable-usage-stats", "--block", *args],
                                env={**ENV, "RAY_TMPDIR": str(log.parent), **HEALTH_CHECKS},
                                stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)


def ray_node_started(node: subprocess.Popen, log: Path) -> None:
    wait_for(lambda: "Ray runtime started" in log.read_text() or node.poll() is not None,
             what=f"ray start ({log.name})")
    assert node.poll() is None, log.read_text()


def end_node(node: subprocess.Popen) -> None:
    """End a node started by ray_start, then whatever of its session is left. (A node whose
    `ray start` has ended by itself has ended its processes.)"""
    if node.poll() is not None:
        return
    node.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        node.wait(timeout=60)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(node.pid, signal.SIGKILL)


@pytest.fixture
def loopback_cluster():
    """A head and a worker node of one CPU each on 127.0.0.1, with token authentication (the
    suite's token, in RAY_AUTH_TOKEN: tests/conftest.py): (address, head, worker)."""
    folder = Path(tempfile.mkdtemp(prefix="ray-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    nodes = []
    try:
        nodes.append(ray_start(folder / "head.log", "--head", "--port", str(port),
                               "--include-dashboard", "false"))
        ray_node_started(nodes[0], folder / "head.log")
        nodes.append(ray_start(folder / "worker.log", "--address", address))
        ray_node_started(nodes[1], folder / "worker.log")
        yield address, nodes[0], nodes[1]
    finally:
        for node in reversed(nodes):
            end_node(node)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_killed_node_is_one_line_and_the_run_resumes_elsewhere_unchanged(
        loopback_cluster, tmp_path, reference):
    """A worker node's raylet killed mid-run: one line says so, with no Ray dump (Ray's message
    about it goes to run.log, in a line that says where Ray's logs keep the rest); then the
    run, stopped and its cluster gone, resumes on this machine and equals the undisturbed run."""
    address, _head, worker = loopback_cluster
    config = write_config(tmp_path)
    proc = start_tune(tmp_path, "--config", str(config), "--address", address)
    run_dir = tmp_path / "runs" / "faults"
    wait_for(lambda: generations_done(run_dir) >= 1 and busy_worker_pids(), what="generation 2")
    raylet = next(pid for pid in map(int, subprocess.run(
        ["pgrep", "-P", str(worker.pid), "raylet"], capture_output=True, text=True,
        check=False).stdout.split()))
    os.kill(raylet, signal.SIGKILL)
    wait_for(lambda: " left: " in (run_dir / ckpt.LOG_FILE).read_text(), what="the node event")
    request_stop(run_dir)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    left = [line for line in err.splitlines() if " left: " in line]
    assert len(left) == 1 and "-1 CPU, 1 CPU now" in left[0]
    assert "[state-dump]" not in out + err and "(raylet)" not in out + err
    # Ray may notice the node gone only after the last generation's games, when the stop asked
    # for after that comes too late: the run has then ended on the node left, and the resume
    # below finds it finished; the run must equal the undisturbed one either way.
    assert "stopped on request" in err or "done: reached max_generations" in err, err
    end_node(_head)  # the cluster is gone: the run goes on on this machine
    resumed = start_tune(tmp_path, "resume", "runs/faults", "--address", "local", "--quiet")
    _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert_same_run(run_dir, reference)
    log = (run_dir / ckpt.LOG_FILE).read_text()
    assert f" {left[0].partition(' ')[2]}\n" in log  # the event line, its time once: the date's
    assert not re.search(r",\d{3} \d\d:\d\d:\d\d ", log)  # no line has two
    assert "[state-dump]" not in log  # Ray's message about the raylet: a line


@pytest.fixture
def lone_head():
    """A head of one CPU on 127.0.0.1, alone, with token authentication: (address, its `ray
    start`, its Ray folder)."""
    folder = Path(tempfile.mkdtemp(prefix="ray-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    head = ray_start(folder / "head.log", "--head", "--port", str(port), "--include-dashboard",
                     "false")
    try:
        ray_node_started(head, folder / "head.log")
        yield f"127.0.0.1:{port}", head, folder
    finally:
        end_node(head)
        shutil.rmtree(folder, ignore_errors=True)


def head_processes(head: subprocess.Popen, folder: Path) -> list[int]:
    """The head node's processes: its `ray start` and what it started (its process group), and
    any process whose command line names its Ray folder."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,args="], capture_output=True, text=True,
                         check=True).stdout
    return [int(pid) for pid, group, args in (line.split(None, 2) for line in out.splitlines())
            if int(group) == head.pid or str(folder) in args]


def lines_of(stream, into: list[str]) -> threading.Thread:
    """A thread that appends the lines of ``stream`` to ``into`` as they come."""

    def read() -> None:
        for line in iter(stream.readline, ""):
            into.append(line)  # noqa: PERF402 - one at a time, seen as they come

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader


@pytest.mark.subprocess
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_a_lost_head_is_one_line_within_15_s_and_the_run_resumes_on_this_machine(
        lone_head, tmp_path, monkeypatch, capsys, sig):
    """The head of the cluster a run joined ends mid-run, by process id: every process of its
    node killed (SIGKILL), or its `ray start` ended as docs/cluster.md ends a node (SIGTERM).
    Within 15 s the run says so in a `tune: error:` line with the commands that resume it there
    and on this machine, and exits with the status documented for it (Ray alone said nothing
    for 60 s, then its own words); tune status names the lost head; the checkpoint resumes."""
    address, head, folder = lone_head
    document = config_document()
    document["run"]["name"] = "lost"
    document["search"]["depth"] = 1
    config = tmp_path / "lost.yaml"
    config.write_text(yaml.safe_dump(document))
    proc = start_tune(tmp_path, "run", str(config), "--address", address, "--quiet",
                      own_group=True)
    run_dir = tmp_path / "runs" / "lost"
    wait_for(lambda: generations_done(run_dir) >= 1 or proc.poll() is not None,
             what="generation 1")
    err: list[str] = []
    reader = lines_of(proc.stderr, err)
    if sig == signal.SIGKILL:
        for pid in head_processes(head, folder):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    else:
        head.terminate()
    wait_for(lambda: any(line.startswith("tune: error: ") for line in err), timeout=15,
             what="the run to say that the head was lost")
    assert proc.wait(timeout=15) == 75, "".join(err)
    reader.join(timeout=10)
    said = "".join(err)
    assert f"the Ray cluster's head at {address} was lost" in said
    assert said.endswith(f"resume with:\n  tune resume runs/lost --address {address}\nor resume "
                         "it on this machine:\n  tune resume runs/lost --address local\n"), said
    assert "Traceback" not in said and "GCS" not in said  # no word of Ray's own
    assert_nothing_left(proc.pid)  # the driver started no process that outlives it

    monkeypatch.chdir(tmp_path)
    assert main(["status", "runs/lost"]) == 3
    status = capsys.readouterr().out
    assert f"the Ray cluster's head at {address} was lost" in status
    assert "  or on this machine: tune resume runs/lost --address local" in status
    kept = ckpt.load_state(run_dir).generation
    assert kept >= 1 and f"stopped after generation {kept} (checkpointed)" in said
    if sig == signal.SIGKILL:  # the same files either way: one resume shows that they go on
        resumed = start_tune(tmp_path, "resume", "runs/lost", "--address", "local", "--quiet")
        _out, resumed_err = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, resumed_err
        assert generations_done(run_dir) == document["cmaes"]["max_generations"]


def test_a_node_added_mid_run_is_counted_and_the_run_is_unchanged(cluster, tmp_path,
                                                                  adaptive_reference):
    """Racing games on the pipelined dispatch, two CPUs, then a node of two more."""
    cluster, _nodes = cluster
    config = write_config(tmp_path, ADAPTIVE_GAMES, games_per_task="auto")
    proc = start_tune(tmp_path, "--config", str(config), "--address", cluster.address)
    run_dir = tmp_path / "runs" / "faults"
    wait_for(lambda: generations_done(run_dir) >= 1, what="generation 1")
    cluster.add_node(num_cpus=2)
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert len([line for line in err.splitlines() if " joined: +2 CPUs, 4 CPUs now" in line]) == 1
    assert_same_run(run_dir, adaptive_reference)
    cpus = [int(row["cpus"]) for row in csv.DictReader(
        (run_dir / ckpt.CLUSTER_FILE).read_text().splitlines())]
    assert cpus[0] == 2 and cpus[-1] == 4


def test_all_workers_gone_checkpoints_and_stops_then_resumes(cluster, tmp_path, reference):
    cluster, nodes = cluster
    config = write_config(tmp_path)
    proc = start_tune(tmp_path, "--config", str(config), "--address", cluster.address, "--quiet")
    run_dir = tmp_path / "runs" / "faults"
    wait_for(lambda: generations_done(run_dir) >= 1, what="generation 1")
    for node in nodes:
        cluster.remove_node(node)
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1
    assert "every Ray worker is gone" in err and f"tune resume {Path('runs/faults')}" in err
    assert "Traceback" not in err
    completed = ckpt.load_state(run_dir).generation
    assert completed >= 1
    assert_consistent_files(run_dir)

    cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    resumed = start_tune(tmp_path, "--resume", "runs/faults", "--address", cluster.address,
                         "--quiet")
    _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert_same_run(run_dir, reference)


CRASHING_UNIT = """
import os, sys
import tuner.games.evaluation as evaluation
from tuner.games.seeds import training_seeds
doomed = set(training_seeds(21, 2, 8))
real_play_unit = evaluation.play_unit
def play_unit(candidate, spec, seeds, driver):
    if candidate == 2 and seeds[0] in doomed:
        os._exit(1)  # the worker process dies every time it runs this unit of generation 2
    return real_play_unit(candidate, spec, seeds, driver)
evaluation.play_unit = play_unit
from tuner.cli.main import main
sys.exit(main())
"""


def test_a_unit_failing_past_max_retries_stops_the_run_cleanly(cluster, tmp_path, reference):
    cluster, _nodes = cluster
    config = write_config(tmp_path, max_retries=2)
    proc = start_tune(tmp_path, "--config", str(config), "--address", cluster.address, "--quiet",
                      driver=CRASHING_UNIT)
    run_dir = tmp_path / "runs" / "faults"
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 1
    assert "candidate 2" in err and "failed after 2 retries" in err
    assert "stopped after generation 1" in err and "tune resume runs/faults" in err
    assert "Traceback" not in err
    assert ckpt.load_state(run_dir).generation == 1
    assert_consistent_files(run_dir)
    resumed = start_tune(tmp_path, "--resume", "runs/faults", "--address", cluster.address,
                         "--quiet")
    _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert_same_run(run_dir, reference)


# ---- the driver: SIGKILL, SIGTERM, Ctrl-C ------------------------------------------------------

SLOW_WRITES = """
import sys, time
import engine.atomic as atomic
real_replace = atomic.os.replace
def slow_replace(src, dst):
    time.sleep(0.4)  # widen the window between writing the temp file and renaming it
    real_replace(src, dst)
atomic.os.replace = slow_replace
from tuner.cli.main import main
sys.exit(main())
"""


def resume_to_the_end(tmp_path: Path) -> None:
    """The run in tmp_path resumed from its checkpoint to its end, its games played in this
    process (what follows a disturbed driver here is its files; `tune resume` on Ray after a
    kill is test_adaptive_games_resume_exactly_on_another_number_of_workers's)."""
    run_dir = tmp_path / "runs" / "faults"
    stored = ckpt.read_stored_config(run_dir)
    config = parse_config(stored, str(run_dir / ckpt.CONFIG_FILE), run_dir)
    TuningRun.resume(config, run_dir, ckpt.load_state(run_dir, stored),
                     progress=False).run(SerialEvaluator(1))


@pytest.mark.parametrize("moment", ["mid-generation", "mid-checkpoint-write"])
def test_sigkilled_driver_resumes_to_the_same_run(tmp_path, reference, moment):
    config = write_config(tmp_path)
    run_dir = tmp_path / "runs" / "faults"
    rng = random.Random(moment)
    driver = SLOW_WRITES if moment == "mid-checkpoint-write" else None
    proc = start_tune(tmp_path, "--config", str(config), "--workers", "2", "--quiet",
                      driver=driver)
    if moment == "mid-generation":
        wait_for(lambda: generations_done(run_dir) >= 1, what="generation 1")
        time.sleep(rng.uniform(0.1, 1.0))
    else:
        wait_for(lambda: (run_dir / "checkpoint.pkl").exists()
                 and list(run_dir.glob(".checkpoint.pkl.tune2048-tmp-*")),
                 what="a checkpoint write after the first")
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert_consistent_files(run_dir)
    resume_to_the_end(tmp_path)
    assert_same_run(run_dir, reference)
    assert not [p for p in run_dir.iterdir() if is_temp_file(p)]


def test_adaptive_games_resume_exactly_on_another_number_of_workers(tmp_path, adaptive_reference):
    """Killed at some moment of generation 2 on one worker, resumed on two: the run equals the
    one played in process, round for round."""
    spent = [(int(row["games_min"]), int(row["games_max"])) for row in csv.DictReader(
        (adaptive_reference / "history.csv").read_text().splitlines())]
    assert any(least < most for least, most in spent)  # a generation raced
    assert any(least == most == ADAPTIVE_GAMES["min"] for least, most in spent)  # one did not
    config = write_config(tmp_path, ADAPTIVE_GAMES)
    run_dir = tmp_path / "runs" / "faults"
    proc = start_tune(tmp_path, "--config", str(config), "--workers", "1", "--quiet")
    wait_for(lambda: generations_done(run_dir) >= 1, what="generation 1")
    time.sleep(random.Random("adaptive").uniform(0.1, 1.5))
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    assert_consistent_files(run_dir)
    resumed = start_tune(tmp_path, "--resume", "runs/faults", "--workers", "2", "--quiet")
    _out, err = resumed.communicate(timeout=600)
    assert resumed.returncode == 0, err
    assert_same_run(run_dir, adaptive_reference)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_and_sigterm_checkpoint_and_exit_cleanly(tmp_path, reference, sig):
    config = write_config(tmp_path)
    run_dir = tmp_path / "runs" / "faults"
    proc = start_tune(tmp_path, "--config", str(config), "--workers", "2", "--quiet")
    wait_for(lambda: generations_done(run_dir) >= 1, what="generation 1")
    proc.send_signal(sig)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130
    assert "checkpointed" in err and "tune resume runs/faults" in err
    assert "Traceback" not in err
    assert_consistent_files(run_dir)
    assert not [p for p in run_dir.iterdir() if is_temp_file(p)]
    assert ckpt.load_state(run_dir).generation >= 1
    if sig == signal.SIGINT:  # the same checkpoint either way: one resume shows it exact
        resume_to_the_end(tmp_path)
        assert_same_run(run_dir, reference)


SIGNAL_BETWEEN_HISTORY_AND_CHECKPOINT = """
import os, signal
from tuner.store import checkpoint
real_encode_state = checkpoint.encode_state
def encode_state(state):  # called once the history is written, before the checkpoint is
    if state.generation == 1:
        os.kill(os.getpid(), signal.{name})
    return real_encode_state(state)
checkpoint.encode_state = encode_state
""" + TUNE_MAIN


# SIGINT only: both signals take the same path through tuner.interrupts (whose own tests hold
# both back), and each costs this test a run with Ray
@pytest.mark.parametrize("sig", [signal.SIGINT])
def test_a_signal_while_a_generation_is_written_waits_for_its_checkpoint(tmp_path, reference, sig):
    config = write_config(tmp_path)
    run_dir = tmp_path / "runs" / "faults"
    driver = SIGNAL_BETWEEN_HISTORY_AND_CHECKPOINT.replace("{name}", sig.name)
    proc = start_tune(tmp_path, "--config", str(config), "--workers", "2", "--quiet",
                      driver=driver)
    _out, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    described = " (SIGTERM)" if sig == signal.SIGTERM else ""
    assert f"interrupted{described} after generation 1 (checkpointed)" in err
    assert "tune resume runs/faults" in err and "Traceback" not in err
    assert ckpt.load_state(run_dir).generation == generations_done(run_dir) == 1
    assert read_weights(run_dir / "best.yaml").provenance["generation"] == 1
    resume_to_the_end(tmp_path)
    assert_same_run(run_dir, reference)


# Moments after the new run's log appears in its staging directory, which is when tune starts Ray
# (about 2 s here); the last ones fall in the first generation. (The run directory itself appears
# only at the first checkpoint, by when this run is a few seconds from its end: a signal that comes
# once the run is done is rightly no interrupt.) Ctrl-C there used to crash the driver (exit -11)
# or leave Ray's agents running; a second Ctrl-C during the shutdown killed it with Ray half
# stopped.
START_UP = [
    pytest.param(signal.SIGINT, 0.0, 1, id="ctrl-c-at-once"),
    pytest.param(signal.SIGINT, 3.0, 1, id="ctrl-c-3s"),
    pytest.param(signal.SIGINT, 1.0, 2, id="ctrl-c-twice-1s"),
    pytest.param(signal.SIGTERM, 1.0, 1, id="sigterm-1s"),
]


@pytest.mark.parametrize(("sig", "delay", "times"), START_UP)
def test_an_interrupt_while_ray_starts_exits_130_and_leaves_no_process(tmp_path, sig, delay,
                                                                       times):
    config = write_config(tmp_path)
    run_dir = tmp_path / "runs" / "faults"
    proc = start_tune(tmp_path, "--config", str(config), "--workers", "1", "--quiet",
                      own_group=True)
    wait_for(lambda: (staging_path(run_dir) / ckpt.LOG_FILE).exists(), what="the new run's log")
    time.sleep(delay)
    for _ in range(times):
        proc.send_signal(sig)
        time.sleep(0.2)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert_nothing_left(proc.pid)


def test_an_interrupt_at_any_moment_of_start_up_says_something_true(tmp_path):
    """From the command's first second (imports, config) to the first checkpoint: exit 130, and
    `tune resume` offered only where there is a checkpoint to resume."""
    config = write_config(tmp_path)
    run_dir = tmp_path / "runs" / "faults"
    for delay in (0.5, 1.0, 2.0, 4.0):
        (run_dir / ckpt.CONFIG_FILE).unlink(missing_ok=True)
        proc = start_tune(tmp_path, "--config", str(config), "--workers", "1", "--quiet",
                          "--overwrite", own_group=True)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130, (delay, err)
        assert "interrupted" in err and "Traceback" not in err, (delay, err)
        if "tune resume" in err:  # offered only where there is something to resume
            ckpt.load_state(run_dir)
        assert_nothing_left(proc.pid)


def test_embedded_ray_starts_its_own_instance_beside_a_running_cluster(cluster, tmp_path):
    """Without --address, tune must not join (or trip over) a cluster already running here."""
    document = yaml.safe_load(yaml.safe_dump(CONFIG))
    document["search"]["depth"] = 0
    document["cmaes"]["max_generations"] = 1
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(document))
    proc = start_tune(tmp_path, "--config", str(path), "--workers", "1", "--quiet")
    _out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert read_weights(tmp_path / "runs" / "faults" / "best.yaml").provenance["status"] == (
        "validated")
