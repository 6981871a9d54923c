"""One contract for every run store: the same assertions run against a run directory being
started (``DirectoryStore.new``, as ``tune run`` opens it: staged until its first checkpoint), a
run directory resumed (``DirectoryStore.existing``, locked) and ``MemoryStore``.

What the loop, its observers and ``tune status`` ask of a store, and who asks:

- ``location``, ``checkpointed``: ``TuningRun`` (tuner/loop/run.py), for its messages and
  whether a run can be resumed;
- ``prepare``, ``write_config``: ``TuningRun.start``, ``resume`` and ``resolve_popsize``;
- ``save_state``, ``write_validation``: the ``Checkpoints`` observer (tuner/loop/observers.py);
- ``write_best``: the ``BestSoFar`` observer;
- ``write_status``: ``LiveStatus`` (tuner/loop/live_status.py), read by ``tune status``
  (tuner/cli/status.py, through ``tuner.store.status_file.read_status``);
- ``take_stop_request``: ``TuningRun.run``, asked by ``tune stop`` (``run_dir.request_stop``);
- ``kept_games``, ``keep_games``, ``kept_games_name``: the run's kept games (tuner/games/kept.py).

A store is read here as its reader reads it: a resume (``checkpoint.load_state``, or
``MemoryStore.state``), ``tune status``, and the weights file reader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from engine import weights_file
from engine.weights_file import WeightsFile, WeightsFileError, parse_weights, read_weights
from tuner.config import stored_text
from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import Candidate, RunState
from tuner.store.run_dir import request_stop
from tuner.store.status_file import RunStatus, parse_status, read_status, status_text
from tuner.store.store import DirectoryStore, MemoryStore, RunStore

RUN_FILES = (ckpt.CONFIG_FILE, ckpt.CHECKPOINT_FILE, ckpt.HISTORY_FILE, ckpt.CLUSTER_FILE,
             ckpt.BEST_FILE, ckpt.VALIDATION_FILE, ckpt.STATUS_FILE, ckpt.STOP_FILE,
             ckpt.KEPT_GAMES_FILE)
CONFIG = {"run": {"name": "r", "seed": 7}, "cmaes": {"popsize": "auto", "max_generations": 3}}


@dataclass
class Opened:
    """A store and how its readers see it: ``read`` a file's bytes (None: there is none),
    ``resumed`` the checkpoint as a resume loads it, ``status`` what ``tune status`` finds
    (None: nothing), ``ask_stop`` what ``tune stop`` does."""

    store: RunStore
    run_dir: Path
    read: Callable[[str], bytes | None]
    resumed: Callable[[], RunState]
    status: Callable[[], RunStatus | None]
    ask_stop: Callable[[], object]


@pytest.fixture(params=["new directory", "existing directory", "memory"])
def opened(request, tmp_path):
    run_dir = tmp_path / "runs" / "r"
    if request.param == "memory":
        store = MemoryStore(run_dir)

        def status() -> RunStatus | None:
            text = store.files.get(ckpt.STATUS_FILE)
            return None if text is None else parse_status(text.decode(), run_dir)

        yield Opened(store, run_dir, store.files.get, store.state, status, store.stop)
        return
    if request.param == "new directory":
        store = DirectoryStore.new(run_dir, overwrite=False, same_config=False)
    else:
        run_dir.mkdir(parents=True)
        store = DirectoryStore.existing(run_dir)

    def read(name: str) -> bytes | None:
        path = store.location / name
        return path.read_bytes() if path.exists() else None

    def status() -> RunStatus | None:
        found = read_status(run_dir)
        return None if found is None else found[0]

    try:
        yield Opened(store, run_dir, read, lambda: ckpt.load_state(run_dir), status,
                     lambda: request_stop(run_dir))
    finally:
        store.close()


def state(generation: int, cluster: bool = False) -> RunState:
    """A run's state after ``generation`` generations, with the cluster's view when asked."""
    return RunState(
        config=CONFIG, generation=generation, strategy=b"pycma\x00state" * generation,
        history=[{"generation": g, "best_fitness": 1000.0 + g, "games": 40} for g in
                 range(1, generation + 1)],
        elites=[Candidate([0.5, -1.25], {"a": 0.5, "b": -1.25}, 1000.0 + generation, 3.5, 40,
                          generation)],
        games=40 * generation, evaluations=10 * generation, seconds=2.5 * generation,
        cluster=tuple({"generation": g, "cpus": 4, "seconds": 2.5} for g in
                      range(1, generation + 1)) if cluster else ())


def run_status(state: str, generation: int, event: str) -> RunStatus:
    return RunStatus(
        run="r", state=state, pid=4321, host="h", process_start=99, generation=generation,
        max_generations=3, games=40 * generation, best_fitness=1000.5, best_stderr=3.5,
        best_generation=generation, fitness="mean_log2_score", cpus=4, share=0.9,
        idle_cores=3.6, idle_rate=None, generation_seconds=2.5, eta_seconds=5.0, event=event,
        started=1.7e9, updated=1.7e9 + generation)


def weights(provenance: dict) -> WeightsFile:
    return WeightsFile("classic", {**read_weights("classic-reference").weights,
                                   "empty_weight": 271.5}, 2, provenance)


def started(opened: Opened) -> RunStore:
    """The store as ``TuningRun.start`` leaves it: prepared, its config written."""
    assert opened.store.prepare() == []
    opened.store.write_config(CONFIG)
    return opened.store


def test_a_store_opened_holds_nothing_and_prepare_writes_nothing(opened):
    assert opened.store.prepare() == []
    assert not opened.store.checkpointed
    assert {name: opened.read(name) for name in RUN_FILES} == dict.fromkeys(RUN_FILES)
    assert opened.status() is None
    assert not opened.store.take_stop_request()


def test_the_config_is_stored_as_configs_are_written_and_a_rewrite_replaces_it(opened):
    store = started(opened)
    assert opened.read(ckpt.CONFIG_FILE) == stored_text(CONFIG).encode()
    popsize = {**CONFIG, "cmaes": {**CONFIG["cmaes"], "popsize": 12}}  # resolve_popsize's
    store.write_config(popsize)
    assert yaml.safe_load(opened.read(ckpt.CONFIG_FILE)) == popsize
    assert not store.checkpointed


def test_a_checkpoint_is_what_a_resume_reads_with_its_history_beside_it(opened):
    store = started(opened)
    store.save_state(state(1))
    assert store.checkpointed and store.location == opened.run_dir
    assert opened.resumed() == state(1)
    assert opened.read(ckpt.HISTORY_FILE) == ckpt.rows_csv(state(1).history).encode()
    assert opened.read(ckpt.CLUSTER_FILE) is None  # no cluster figures, no file


def test_the_latest_checkpoint_replaces_the_last_with_its_cluster_figures(opened):
    store = started(opened)
    store.save_state(state(1))
    store.save_state(state(2, cluster=True))
    assert opened.resumed() == state(2, cluster=True)
    assert opened.read(ckpt.CHECKPOINT_FILE) == ckpt.encode_state(state(2, cluster=True))
    assert opened.read(ckpt.HISTORY_FILE) == ckpt.rows_csv(state(2).history).encode()
    assert opened.read(ckpt.CLUSTER_FILE) == ckpt.rows_csv(
        list(state(2, cluster=True).cluster)).encode()
    assert store.location == opened.run_dir


def test_the_best_weights_read_back_as_written_and_the_validated_winner_replaces_them(opened):
    store = started(opened)
    so_far, winner = weights({"status": "in progress"}), weights({"status": "validated"})
    for written in (so_far, winner):
        store.write_best(written)
        text = opened.read(ckpt.BEST_FILE).decode()
        assert parse_weights(text, ckpt.BEST_FILE, store.location) == written


def test_best_weights_their_reader_would_refuse_are_never_written(opened, monkeypatch):
    store = started(opened)
    monkeypatch.setattr(weights_file, "MAX_BYTES", 1_000)  # as the reader reads it
    with pytest.raises(WeightsFileError, match="read back only up to 1,000"):
        store.write_best(weights({"notes": "x" * 1_000}))
    assert opened.read(ckpt.BEST_FILE) is None


def test_the_validation_table_is_kept_as_written_beside_the_finished_checkpoint(opened):
    store = started(opened)
    store.save_state(state(1))
    table = "candidate,fitness,w_empty\nμ,1000.5,2.5\n"  # the mean's label is not ASCII
    store.write_validation(table)
    finished = state(1)
    finished.finished = True
    store.save_state(finished)
    assert opened.read(ckpt.VALIDATION_FILE) == table.encode("utf-8")
    assert opened.resumed().finished


def test_tune_status_reads_the_latest_status_written(opened):
    store = started(opened)
    store.write_status(status_text(run_status("running", 0, "starting")))
    assert opened.status() == run_status("running", 0, "starting")
    store.write_status(status_text(run_status("stopped", 1, "stopped on request")))
    assert opened.status() == run_status("stopped", 1, "stopped on request")
    assert opened.read(ckpt.STATUS_FILE) == status_text(
        run_status("stopped", 1, "stopped on request")).encode()


def test_a_status_written_before_the_first_checkpoint_is_found_after_it(opened):
    """A new run says it is starting before it has a checkpoint, then takes its place."""
    store = started(opened)
    store.write_status(status_text(run_status("running", 0, "starting")))
    store.save_state(state(1))
    assert opened.status() == run_status("running", 0, "starting")


def test_a_stop_request_is_taken_once(opened):
    store = started(opened)
    assert not store.take_stop_request()
    opened.ask_stop()
    assert store.take_stop_request()
    assert not store.take_stop_request()
    assert opened.read(ckpt.STOP_FILE) is None


def test_a_stop_asked_during_the_first_generation_is_taken_after_its_checkpoint(opened):
    """``tune stop`` while a new run plays its first generation: the run stops after it."""
    store = started(opened)
    opened.ask_stop()
    store.save_state(state(1))
    assert store.take_stop_request()
    assert not store.take_stop_request()


def test_kept_games_are_appended_started_afresh_and_emptied_by_a_checkpoint(opened):
    store = started(opened)
    assert store.kept_games() == ""
    store.keep_games("a\n")
    store.keep_games("b\n")
    assert store.kept_games() == "a\nb\n" and opened.read(ckpt.KEPT_GAMES_FILE) == b"a\nb\n"
    assert store.kept_games_name == str(store.location / ckpt.KEPT_GAMES_FILE)
    store.keep_games("c\n", start=True)
    assert store.kept_games() == "c\n"
    store.save_state(state(1))
    assert store.kept_games() == "" and opened.read(ckpt.KEPT_GAMES_FILE) is None
    assert opened.resumed() == state(1)
