"""tuner.cluster.events: node, worker and retry events as lines; Ray's own messages in run.log
only, a line each. (The lines a real cluster gives: tests/tuner/cluster/test_faults.py.)"""

from __future__ import annotations

import argparse
import io
import logging
import re

import pytest

from tuner.cli.main import setup_logging
from tuner.cluster import events

# Messages as Ray 2.60 sends them to the driver (shortened where they go on and on).
WORKER_DIED = (
    "A worker died or was killed while executing a task by an unexpected system error. To "
    "troubleshoot the problem, check the logs for the dead worker. Lease ID: 0000000001000000ff "
    "Worker ID: d1e2912ac88eb93af5 Node ID: c988df9de06b0b8c Worker IP address: 192.0.2.2 "
    "Worker port: 41253 Worker PID: 4226 Worker exit type: SYSTEM_ERROR Worker exit detail: "
    "Worker unexpectedly exits with a connection error code 2. End of file."
)
TASK_RETRIED = ("Task play_unit failed. There are 3 retries remaining, so the task will be "
                "retried. Error: ")
RAYLET_DIED = (
    "Raylet is terminated. Termination is unexpected. Possible reasons include: (1) SIGKILL by "
    "the user or system OOM killer, (2) Invalid memory access from Raylet causing SIGSEGV or "
    "SIGBUS, (3) Other termination signals. Last 20 lines of the Raylet logs:\n"
    + "    [state-dump] \tNodeManager.deadline_timer.flush_free_objects - 1 total\n" * 8
)


def node(node_id: str, cpus: int, alive: bool = True, address: str = "127.0.0.1") -> dict:
    """A row of ray.nodes()."""
    return {"NodeID": node_id, "Alive": alive, "NodeManagerAddress": address,
            "Resources": {"CPU": float(cpus)} if cpus else {}}


def test_a_node_that_left_and_one_that_joined_are_a_line_each():
    before = events.alive_nodes([node("aaaaaaaa11", 0), node("bbbbbbbb22", 1)])
    after = events.alive_nodes([node("aaaaaaaa11", 0), node("bbbbbbbb22", 1, alive=False),
                                node("cccccccc33", 2, address="10.0.0.3")])
    assert events.node_changes(before, after) == [
        (logging.WARNING, ("node 127.0.0.1 (bbbbbbbb) left: -1 CPU, 2 CPUs now; its tasks are "
                          "played again elsewhere")),
        (logging.INFO, "node 10.0.0.3 (cccccccc) joined: +2 CPUs, 2 CPUs now"),
    ]
    assert events.node_changes(after, after) == []


ENGINE_FAILED = (  # as Ray 2.60 says a task failed by EngineLost (its colour codes left out)
    "Task play_unit failed. There are 2 retries remaining, so the task will be retried. Error: "
    "User exception:\nray::play_unit() (pid=4043, ip=192.0.2.2)\n  File \"/work/main/tuner/games/"
    "evaluation.py\", line 100, in play_unit\n    return play_games(spec, list(seeds))\n"
    "engine.external.player.EngineLost: engine './c_engine': reports an error: not a seed: {seed} "
    "(request: 'play depth:2 {seed}')\n")


@pytest.mark.parametrize(("message", "line"), [
    (WORKER_DIED, "Ray worker 4226 on 192.0.2.2 died while playing a task"),
    ("A worker died or was killed while executing a task (details elsewhere)",
     "a Ray worker died while playing a task"),
    (TASK_RETRIED, "a task of games was lost and is played again (3 retries left)"),
    (TASK_RETRIED.replace("are 3 retries", "is 1 retry"),
     "a task of games was lost and is played again (1 retry left)"),
    (RAYLET_DIED, None),  # the node's departure is said from the node table
    (ENGINE_FAILED.format(seed=7), ("a task's engine failed; the task is played again (2 "
                                    "retries left): engine './c_engine': reports an error: not "
                                    "a seed: 7 (request: 'play depth:2 7')")),
])
def test_rays_messages_that_a_user_acts_on_make_an_event_line(message, line):
    assert events.message_event(message) == line


@pytest.fixture
def logs(tmp_path):
    """The terminal as `tune` sets it up (quiet: warnings only), and a run.log beside it, as a
    job writes it."""
    tuner_log = logging.getLogger("tuner")
    saved = tuner_log.handlers[:], tuner_log.level, tuner_log.propagate
    setup_logging(argparse.Namespace(quiet=True, verbose=False))
    terminal = io.StringIO()
    tuner_log.handlers[0].setStream(terminal)
    path = tmp_path / "run.log"
    file_handler = logging.FileHandler(path)
    file_handler.setFormatter(events.RunLogFormat())
    tuner_log.addHandler(file_handler)
    yield terminal, path
    file_handler.close()
    tuner_log.handlers[:], tuner_log.level, tuner_log.propagate = saved


STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} "  # what begins a line of run.log


def test_rays_messages_are_a_line_each_in_run_log_and_their_events_go_to_the_terminal_too(
        logs, monkeypatch):
    """A dead raylet's message, with its 20 lines of log, is one line saying where the rest is,
    and once though Ray sends it twice; an event line has one date and time, not two."""
    terminal, run_log = logs
    monkeypatch.setattr(events, "_ray_said", {"message": "", "at": -events.SAME_EVENT_SECONDS})
    for message in (RAYLET_DIED, RAYLET_DIED, WORKER_DIED):
        events.ray_said(message, logs="/tmp/ray-head/session_1/logs")
    shown = terminal.getvalue().splitlines()
    assert len(shown) == 1
    assert shown[0].endswith(" Ray worker 4226 on 192.0.2.2 died while playing a task")
    assert re.fullmatch(r"\d\d:\d\d:\d\d ", shown[0][:9])  # the time it was seen
    kept = run_log.read_text().splitlines()
    assert [re.match(STAMP, line) is not None for line in kept] == [True] * 3
    assert kept[0].endswith(" Ray: Raylet is terminated. Termination is unexpected. Possible "
                            "reasons include: (1) SIGKILL by the user or system OOM killer, "
                            "(2) Invalid memory access from Raylet causing SIGSEGV or SIGBUS, "
                            "(3) Other termination signals. Last 20 lines of the Raylet logs: "
                            "[8 more lines in Ray's logs: /tmp/ray-head/session_1/logs, on the "
                            "node it is about]")
    assert kept[1].endswith(f" Ray: {WORKER_DIED}")  # one line already: whole
    assert re.fullmatch(STAMP + "Ray worker 4226 on 192.0.2.2 died while playing a task",
                        kept[2])


def test_a_tasks_failure_keeps_its_first_line_and_its_exception_in_run_log():
    assert events.one_line(ENGINE_FAILED.format(seed=7)) == (
        "Task play_unit failed. There are 2 retries remaining, so the task will be retried. "
        "Error: User exception: ... engine.external.player.EngineLost: engine './c_engine': "
        "reports an error: not a seed: 7 (request: 'play depth:2 7') [3 more lines in Ray's "
        "logs]")


def test_an_engine_failing_the_same_way_task_after_task_is_said_once_a_while(logs,
                                                                            monkeypatch):
    terminal, run_log = logs
    clock = [100.0]
    monkeypatch.setattr(events.time, "monotonic", lambda: clock[0])
    for seed in (7, 8, 9):  # at once: one line
        events.ray_said(ENGINE_FAILED.format(seed=seed))
    clock[0] += events.SAME_EVENT_SECONDS
    events.ray_said(ENGINE_FAILED.format(seed=10))  # a while later: said again
    shown = terminal.getvalue().splitlines()
    assert [line.rsplit("not a seed: ", 1)[1] for line in shown] == [
        "7 (request: 'play depth:2 7')", "10 (request: 'play depth:2 10')"]
    assert run_log.read_text().count("EngineLost") == 4  # every message in run.log


def test_the_node_table_is_read_at_most_every_few_seconds(monkeypatch, logs):
    terminal, _run_log = logs
    table = [node("aaaaaaaa11", 1), node("bbbbbbbb22", 1)]
    reads = []
    watch = events.NodeWatch(lambda: reads.append(1) or table)
    table = [node("aaaaaaaa11", 1)]
    assert watch.poll() is False  # too soon after the first look
    assert len(reads) == 1 and terminal.getvalue() == ""
    monkeypatch.setattr(events, "NODE_CHECK_SECONDS", 0.0)
    assert watch.poll() is True  # a node left: the evaluator counts its CPUs again
    assert watch.poll() is False
    shown = terminal.getvalue().splitlines()
    assert len(reads) == 3 and len(shown) == 1
    assert "node 127.0.0.1 (bbbbbbbb) left: -1 CPU, 1 CPU now" in shown[0]
