"""The run store: a run directory's lifecycle through ``DirectoryStore`` (staged, placed,
locked, closed). What every store does, ``MemoryStore`` too: test_store_contract.py."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import RunState
from tuner.store.run_dir import staging_path
from tuner.store.store import DirectoryStore

LOCKED = """
import sys
from pathlib import Path
from tuner.store.store import DirectoryStore
try:
    DirectoryStore.existing(Path(sys.argv[1]))
except Exception as err:
    print(type(err).__name__, err)
"""


def state() -> RunState:
    return RunState(config={"run": {"name": "r"}}, generation=1,
                    history=[{"generation": 1, "best": 2.0}])


def test_a_new_run_is_staged_until_its_first_checkpoint_then_takes_its_place(tmp_path):
    run_dir = tmp_path / "runs" / "r"
    store = DirectoryStore.new(run_dir, overwrite=False, same_config=False)
    assert store.location == staging_path(run_dir) and not store.checkpointed
    store.write_config(state().config)
    store.save_state(state())
    assert store.location == run_dir and store.checkpointed
    assert (run_dir / ckpt.CHECKPOINT_FILE).is_file() and not staging_path(run_dir).exists()
    store.close()
    assert ckpt.load_state(run_dir).history == state().history


def test_a_new_run_closed_before_its_first_checkpoint_leaves_nothing(tmp_path):
    run_dir = tmp_path / "runs" / "r"
    store = DirectoryStore.new(run_dir, overwrite=False, same_config=False)
    store.write_config(state().config)
    store.close()
    assert not (tmp_path / "runs").exists()


@pytest.mark.subprocess
def test_an_existing_run_is_locked_until_the_store_closes(tmp_path):
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    store = DirectoryStore.existing(run_dir)
    refused = subprocess.run([sys.executable, "-c", LOCKED, str(run_dir)], capture_output=True,
                             text=True, check=True).stdout
    assert refused.startswith("CheckpointError") and "in use by tune process" in refused
    store.close()
    store.close()  # twice is harmless
    assert subprocess.run([sys.executable, "-c", LOCKED, str(run_dir)], capture_output=True,
                          text=True, check=True).stdout == ""


def test_a_stop_request_left_by_an_earlier_job_is_removed_when_the_run_is_locked(tmp_path):
    """A request is written only while a process holds the lock: one found when the lock is
    taken was an earlier job's, and one written after it is this job's, whenever it comes."""
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / ckpt.STOP_FILE).write_text("stop requested by process 1\n")
    store = DirectoryStore.existing(run_dir)
    try:
        assert not (run_dir / ckpt.STOP_FILE).exists()
        assert not store.take_stop_request()
        (run_dir / ckpt.STOP_FILE).write_text("stop requested by process 2\n")
        assert store.take_stop_request() and not store.take_stop_request()
    finally:
        store.close()
