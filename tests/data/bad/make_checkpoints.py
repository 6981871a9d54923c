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
- ``run-config-list``: ``config.yaml`` is a YAML list, not a run config.
- ``run-config-garbage``: ``config.yaml`` is not YAML.
- ``run-empty-checkpoint``: ``checkpoint.pkl`` is empty (a disk that filled up).

The ``report-*`` directories (for ``tune report``) start as a finished two-generation run of a
small depth-0 config played in this process, less the files ``tune report`` does not read
(``checkpoint.pkl``, ``run.log``); then each is broken in one way:

- ``report-truncated-history``: the last line of ``history.csv`` is cut in half.
- ``report-history-extra-field``: a line of ``history.csv`` has one field too many.
- ``report-missing-column``: ``history.csv`` has no ``sigma`` column.
- ``report-bad-number``: a ``generation`` in ``history.csv`` is ``x``.
- ``report-no-history``: ``history.csv`` is missing.
- ``report-truncated-validation``: the last line of ``validation.csv`` is cut in half.
- ``report-foreign-best``: ``best.yaml`` holds another family's weights (snake).
- ``report-best-missing``: ``best.yaml`` is missing.
- ``report-not-run-config``: ``config.yaml`` is a weights file, not a run config.
- ``report-config-list``: ``config.yaml`` is a YAML list.
- ``report-config-invalid``: ``config.yaml`` is a run config with a depth of 9.

Commit the generated files: the tests read them, they do not run this script. The committed
checkpoints predate checkpoint format version 2 (they are bare pickles, whose version 99 is inside
the pickle); regenerated ones have version 2's header line, and every case still holds for them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from tuner.config import load_config
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt

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


def finished_run(run_dir: Path) -> None:
    """A complete run directory: two generations and the validation of a depth-0 config."""
    from tuner.config import parse_config
    from tuner.games.evaluation import SerialEvaluator

    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True)
    document = yaml.safe_load((REPO_ROOT / "configs" / "quick.yaml").read_text(encoding="utf-8"))
    document["search"]["depth"] = 0
    document["evaluation"]["games"] = 4
    document["cmaes"].update(popsize=4, max_generations=2)
    document["validation"] = {"games": 4, "top_k": 1}
    config = parse_config(document, "make_checkpoints", HERE)
    TuningRun.start(config, run_dir, progress=False).run(SerialEvaluator(4))


def cut_last_line(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[-1] = lines[-1][: len(lines[-1]) // 2]
    path.write_text("".join(lines), encoding="utf-8")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def broken_runs() -> None:
    """The run-* directories added with the corpus's second hundred cases."""
    listed = HERE / "run-config-list"
    fresh_run(listed)
    (listed / ckpt.CONFIG_FILE).write_text("- run\n- family\n", encoding="utf-8")

    garbage = HERE / "run-config-garbage"
    fresh_run(garbage)
    (garbage / ckpt.CONFIG_FILE).write_text("run: {name: [unclosed\n", encoding="utf-8")

    empty = HERE / "run-empty-checkpoint"
    fresh_run(empty)
    (empty / ckpt.CHECKPOINT_FILE).write_bytes(b"")


def broken_reports() -> None:
    """The report-* directories."""
    breaks = {
        "report-truncated-history": lambda d: cut_last_line(d / ckpt.HISTORY_FILE),
        "report-history-extra-field": lambda d: edit(d / ckpt.HISTORY_FILE, "\n2,", "\n2,2,"),
        "report-missing-column": lambda d: edit(d / ckpt.HISTORY_FILE, ",sigma,", ",sigma0,"),
        "report-bad-number": lambda d: edit(d / ckpt.HISTORY_FILE, "\n2,", "\nx,"),
        "report-no-history": lambda d: (d / ckpt.HISTORY_FILE).unlink(),
        "report-truncated-validation": lambda d: cut_last_line(d / ckpt.VALIDATION_FILE),
        "report-foreign-best": lambda d: shutil.copyfile(
            REPO_ROOT / "engine" / "baselines" / "seed000-snake.yaml", d / ckpt.BEST_FILE),
        "report-best-missing": lambda d: (d / ckpt.BEST_FILE).unlink(),
        "report-not-run-config": lambda d: shutil.copyfile(d / ckpt.BEST_FILE,
                                                           d / ckpt.CONFIG_FILE),
        "report-config-list": lambda d: (d / ckpt.CONFIG_FILE).write_text(
            "- run\n- family\n", encoding="utf-8"),
        "report-config-invalid": lambda d: edit(d / ckpt.CONFIG_FILE, "depth: 0", "depth: 9"),
    }
    for name, damage in breaks.items():
        run_dir = HERE / name
        finished_run(run_dir)
        for unread in (ckpt.LOG_FILE, ckpt.CHECKPOINT_FILE):  # tune report reads neither
            (run_dir / unread).unlink(missing_ok=True)
        damage(run_dir)


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

    broken_runs()
    broken_reports()


if __name__ == "__main__":
    main()
