"""tuner.store.run_dir: what a directory holds, the lock, and a new run that takes its place only once
it has a checkpoint."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import Holds, Lock, NewRun, holds, staging_path


def make(directory: Path, *names: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name in names:
        (directory / name).write_text(name, encoding="utf-8")
    return directory


@pytest.mark.parametrize(("names", "expected"), [
    ((), Holds.NOTHING),
    (("config.yaml",), Holds.STARTED),
    (("config.yaml", "run.log"), Holds.STARTED),
    (("config.yaml", "checkpoint.pkl", "history.csv"), Holds.RUN),
    (("config.yaml", "best.yaml", "history.csv", "convergence.png"), Holds.RESULTS),
    (("best.yaml",), Holds.RESULTS),
    (("config.yaml", "notes.txt"), Holds.OTHER),
])
def test_what_a_directory_holds(tmp_path, names, expected):
    assert holds(make(tmp_path / "r", *names)) is expected


def test_a_missing_directory_holds_nothing_and_a_file_is_refused(tmp_path):
    assert holds(tmp_path / "missing") is Holds.NOTHING
    (tmp_path / "file").write_text("x", encoding="utf-8")
    with pytest.raises(CheckpointError, match="exists and is not a directory"):
        holds(tmp_path / "file")


@pytest.mark.parametrize("overwrite", [False, True])
def test_results_without_a_checkpoint_are_never_replaced(tmp_path, overwrite):
    shipped = make(tmp_path / "runs" / "classic-d3", "config.yaml", "best.yaml", "history.csv")
    before = sorted(p.name for p in shipped.iterdir())
    with pytest.raises(CheckpointError, match="results without a checkpoint, which tune never"):
        NewRun(shipped, overwrite=overwrite, same_config=True)
    assert sorted(p.name for p in shipped.iterdir()) == before
    assert not staging_path(shipped).exists()


def test_a_run_is_refused_without_overwrite_and_resuming_is_suggested(tmp_path):
    run = make(tmp_path / "r", "config.yaml", "checkpoint.pkl")
    with pytest.raises(CheckpointError, match=f"resume it with: tune resume {run}"):
        NewRun(run, overwrite=False, same_config=True)
    with pytest.raises(CheckpointError, match="pass --overwrite"):
        NewRun(run, overwrite=False, same_config=False)


def test_overwrite_keeps_the_old_run_until_the_new_one_takes_its_place(tmp_path):
    run = make(tmp_path / "r", "config.yaml", "checkpoint.pkl", "best.yaml")
    new = NewRun(run, overwrite=True, same_config=False)
    make(new.staging, "config.yaml", "checkpoint.pkl")
    assert (run / "best.yaml").read_text(encoding="utf-8") == "best.yaml"  # intact so far
    assert new.take_place() == run
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pkl", "config.yaml"]
    assert not new.staging.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["r"]  # nothing retired is left
    new.release()


def test_an_abandoned_run_leaves_nothing_behind(tmp_path):
    run_dir = tmp_path / "outputs" / "deep" / "r"
    new = NewRun(run_dir, overwrite=False, same_config=False)
    make(new.staging, "config.yaml", "run.log")
    new.abandon()
    new.release()
    assert list(tmp_path.iterdir()) == []  # the folders made for it are gone too


def test_an_abandoned_overwrite_leaves_the_old_run_as_it_was(tmp_path):
    run = make(tmp_path / "r", "config.yaml", "checkpoint.pkl")
    new = NewRun(run, overwrite=True, same_config=False)
    new.abandon()
    new.release()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r"]
    assert sorted(p.name for p in run.iterdir()) == ["checkpoint.pkl", "config.yaml"]


def test_a_staging_directory_left_by_a_dead_process_is_cleared(tmp_path):
    run_dir = tmp_path / "r"
    make(staging_path(run_dir), "config.yaml", "run.log")
    new = NewRun(run_dir, overwrite=False, same_config=False)
    assert list(new.staging.iterdir()) == []
    new.release()


LOCKER = """
import sys, time
from pathlib import Path
from tuner.store.run_dir import Lock
lock = Lock(Path(sys.argv[1]))
print("locked", flush=True)
time.sleep(60)
"""


@pytest.mark.subprocess
def test_a_second_process_is_refused_and_told_who_holds_the_lock(tmp_path):
    run = make(tmp_path / "r", "config.yaml", "checkpoint.pkl")
    holder = subprocess.Popen([sys.executable, "-c", LOCKER, str(run)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        with pytest.raises(CheckpointError, match=f"in use by tune process {holder.pid}"):
            Lock(run)
        with pytest.raises(CheckpointError, match="in use by"):
            NewRun(run, overwrite=True, same_config=False)
    finally:
        holder.kill()
        holder.wait()
    Lock(run).release()  # free once the holder is gone


def test_the_lock_writes_nothing(tmp_path):
    run = make(tmp_path / "r", "config.yaml")
    before = sorted(os.listdir(run))
    lock = Lock(run)
    assert sorted(os.listdir(run)) == before
    lock.release()


def test_run_files_are_the_checkpoint_modules_names():
    from tuner.store.run_dir import RUN_FILES

    assert {ckpt.CONFIG_FILE, ckpt.CHECKPOINT_FILE, ckpt.HISTORY_FILE, ckpt.BEST_FILE,
            ckpt.VALIDATION_FILE, ckpt.LOG_FILE} <= RUN_FILES
