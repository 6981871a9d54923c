"""Evaluation backends: the same jobs give the same results in process and on Ray."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from engine.batch import PlayerSpec
from tuner import evaluation
from tuner.errors import EvaluationError
from tuner.evaluation import Job, RayEvaluator, SerialEvaluator, split_units

CLASSIC = PlayerSpec("classic", {"lost_penalty": 200000.0, "monotonicity_power": 4.0,
                                 "monotonicity_weight": 47.0, "sum_power": 3.5,
                                 "sum_weight": 11.0, "merges_weight": 700.0,
                                 "empty_weight": 270.0}, depth=0)
SNAKE = PlayerSpec("snake", {"decay": 0.25, "tile_power": 1.0, "head_penalty": 1.0,
                             "empty_weight": 0.0}, depth=0)


def jobs() -> list[Job]:
    seeds = tuple(range(100, 111))
    return [Job(0, CLASSIC, seeds), Job(1, SNAKE, seeds)]


def test_units_cover_every_seed_once_in_order():
    units = split_units(jobs(), games_per_task=4)
    assert [(j, u) for j, u, _ in units] == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    assert [seed for j, _, seeds in units if j == 0 for seed in seeds] == list(range(100, 111))


def test_serial_results_are_in_seed_order_and_count_progress():
    done = []
    results = SerialEvaluator(games_per_task=4).play(jobs(), done.append)
    assert [[r.seed for r in rs] for rs in results] == [list(range(100, 111))] * 2
    assert sum(done) == 22


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_backend_matches_the_serial_backend(local_ray):
    serial = SerialEvaluator(games_per_task=3).play(jobs())
    evaluator = RayEvaluator(games_per_task=3)
    done = []
    on_ray = evaluator.play(jobs(), done.append)
    evaluator.close()
    assert local_ray.is_initialized()  # it joined an existing Ray, so it does not shut it down
    assert sum(done) == 22
    strip = [[(r.seed, r.score, r.moves, r.final_board, r.moves_evaluated) for r in rs]
             for rs in serial]
    assert strip == [[(r.seed, r.score, r.moves, r.final_board, r.moves_evaluated) for r in rs]
                     for rs in on_ray]


@pytest.mark.parametrize("backend", ["serial", "ray"])
def test_a_crash_in_a_game_names_candidate_seed_and_traceback(backend, request):
    bad = [Job(3, CLASSIC, (5, "not-a-seed", 6))]
    if backend == "ray":
        request.getfixturevalue("local_ray")
        evaluator = RayEvaluator(games_per_task=8)
    else:
        evaluator = SerialEvaluator(games_per_task=8)
    with pytest.raises(EvaluationError) as err:
        evaluator.play(bad)
    message = str(err.value)
    assert "candidate 3" in message and "'not-a-seed'" in message and "Traceback" in message


# ---- start-up and shutdown under signals --------------------------------------------------------

def test_signals_held_back_are_recorded_and_handed_to_the_caller():
    """How Ray's start-up and shutdown are kept from being cut half-way by Ctrl-C or SIGTERM."""
    # a test run started in the background inherits SIGINT as ignored: Python's handler, as tune has
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        held = evaluation._signals_held((signal.SIGINT, signal.SIGTERM))
        with held as arrived:
            os.kill(os.getpid(), signal.SIGINT)  # blocked: pending, taken by arrived()
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)  # nothing raised here
            assert sorted(arrived()) == sorted([signal.SIGINT, signal.SIGTERM])
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
        assert not signal.sigpending()
    finally:
        signal.signal(signal.SIGINT, inherited)


def test_ray_keeps_its_sigterm_handler_to_itself_while_it_starts():
    from ray._private import utils

    real = utils.set_sigterm_handler
    with evaluation._ray_sigterm_handler_kept_back() as wanted:
        utils.set_sigterm_handler(print)  # what ray.init does first
        assert wanted == [print]
    assert utils.set_sigterm_handler is real
    assert signal.getsignal(signal.SIGTERM) is not print


STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"


@pytest.mark.parametrize("code", ["import time; time.sleep(60)", STUBBORN],
                         ids=["ends-on-sigterm", "ignores-sigterm"])
def test_processes_ray_leaves_behind_are_ended(code):
    """What close() does with the processes of an embedded Ray still running after shutdown."""
    leftover = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.3)  # past the interpreter's start, so its SIGTERM handler is in place
    start = evaluation._process_table()[leftover.pid][1]
    started = time.monotonic()
    evaluation._end_leftovers({leftover.pid: start})
    assert leftover.pid not in evaluation._process_table()  # ended, and reaped (no zombie)
    assert time.monotonic() - started < 4 * evaluation.LEFTOVER_GRACE


def test_a_process_that_reused_a_pid_is_left_alone():
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        evaluation._end_leftovers({other.pid: "not its start time"})
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()
