"""Regenerate the broken run directories of this corpus (run ``python make_checkpoints.py``).

Each ``run-*`` directory starts as a real run directory made without Ray: ``TuningRun.start``
writes ``config.yaml`` and ``save_state`` writes a complete ``checkpoint.pkl`` (and an empty
``history.csv``) for generation 0 of configs/quick.yaml. Each copy is then broken in one way:

- ``run-truncated``: the checkpoint is cut to half its bytes.
- ``run-foreign``: ``config.yaml`` is another run's (name and seed edited), so it no longer matches
  the config pickled inside the checkpoint.
- ``run-version-99``: the checkpoint's header line says format version 99.
- ``run-no-checkpoint``: ``config.yaml`` only, as a run killed before its first generation leaves.
- ``run-no-config``: ``checkpoint.pkl`` only.

Commit the generated files: the tests read them, they do not run this script. The committed
checkpoints predate checkpoint format version 2 (they are bare pickles, whose version 99 is inside
the pickle); regenerated ones have version 2's header line, and every case still holds for them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tuner import checkpoint as ckpt
from tuner.config import load_config
from tuner.run import TuningRun

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]


def fresh_run(run_dir: Path) -> None:
    """A complete, valid run directory at generation 0."""
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    config = load_config(REPO_ROOT / "configs" / "quick.yaml")
    run = TuningRun.start(config, run_dir, progress=False)
    ckpt.save_state(run_dir, run.state)


def main() -> None:
    truncated = HERE / "run-truncated"
    fresh_run(truncated)
    data = (truncated / ckpt.CHECKPOINT_FILE).read_bytes()
    (truncated / ckpt.CHECKPOINT_FILE).write_bytes(data[: len(data) // 2])

    foreign = HERE / "run-foreign"
    fresh_run(foreign)
    stored = yaml.safe_load((foreign / ckpt.CONFIG_FILE).read_text(encoding="utf-8"))
    stored["run"]["name"] = "another-run"
    stored["run"]["seed"] += 1
    ckpt.write_config(foreign, stored)

    version = HERE / "run-version-99"
    fresh_run(version)
    data = (version / ckpt.CHECKPOINT_FILE).read_bytes()
    header = f"{ckpt.CHECKPOINT_FORMAT} {ckpt.CHECKPOINT_VERSION} ".encode()
    assert data.startswith(header)
    (version / ckpt.CHECKPOINT_FILE).write_bytes(
        data.replace(header, f"{ckpt.CHECKPOINT_FORMAT} 99 ".encode(), 1)
    )

    no_checkpoint = HERE / "run-no-checkpoint"
    fresh_run(no_checkpoint)
    (no_checkpoint / ckpt.CHECKPOINT_FILE).unlink()
    (no_checkpoint / ckpt.HISTORY_FILE).unlink()

    no_config = HERE / "run-no-config"
    fresh_run(no_config)
    (no_config / ckpt.CONFIG_FILE).unlink()


if __name__ == "__main__":
    main()
