"""Refactoring keeps every result: each shipped config (and each strategy), capped to three
generations at its own seed, writes the same ``history.csv``, ``validation.csv`` and
``best.yaml`` byte for byte as the golden runs in ``tests/data/golden/`` (written before the
tuner's redesign by ``tests/golden_runs.py``); and a checkpoint that tune2048 wrote
before the redesign (one per strategy, after generation 1) resumes to the same files."""

from __future__ import annotations

import pytest
from golden_runs import GOLDEN, GOLDEN_FILES, golden_configs, play_golden

from tuner.config import parse_config

CONFIGS = golden_configs()


def test_every_golden_config_has_its_golden_run():
    assert sorted(CONFIGS) == sorted(p.name for p in GOLDEN.iterdir()
                                     if p.is_dir() and not p.name.startswith((".", "_")))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_capped_shipped_config_writes_its_golden_files(name, tmp_path):
    produced = play_golden(CONFIGS[name], tmp_path / "work")
    for file in GOLDEN_FILES:
        assert produced[file] == (GOLDEN / name / file).read_bytes(), f"{name}/{file} differs"


@pytest.mark.slow
@pytest.mark.parametrize("strategy", sorted(p.name for p in (GOLDEN / "_checkpoints").iterdir()))
def test_a_checkpoint_from_before_the_redesign_resumes_to_the_golden_files(strategy, tmp_path):
    name = f"strategy-{strategy}"
    produced = play_golden(CONFIGS[name], tmp_path / "work", GOLDEN / "_checkpoints" / strategy)
    for file in GOLDEN_FILES:
        assert produced[file] == (GOLDEN / name / file).read_bytes(), f"{name}/{file} differs"


def test_a_run_in_memory_writes_the_same_bytes_as_a_run_directory():
    """The store's twin: benchmarks and tests that run without a disk see the files a run
    directory would hold."""
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.run import TuningRun
    from tuner.store.store import MemoryStore

    name = "snake"
    config = CONFIGS[name]
    store = MemoryStore()
    parsed = parse_config(config, source="config.source.yaml")
    with SerialEvaluator() as evaluator:
        state = TuningRun.start(parsed, store, progress=False).run(evaluator)
    assert state.finished and store.state().history == state.history
    for file in GOLDEN_FILES:
        assert store.files[file] == (GOLDEN / name / file).read_bytes(), file
