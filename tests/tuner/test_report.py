"""tuner.report: the convergence plot is written atomically and leaves no temporary file."""

from __future__ import annotations

import os
import stat

import pytest

from engine import atomic
from tuner.report import PLOT_FILE, plot_convergence

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HISTORY = [
    {"generation": float(g), "best": 1000.0 + 50 * g, "best_stderr": 20.0,
     "median": 900.0 + 40 * g, "worst": 500.0, "sigma": 0.3 / (g + 1)}
    for g in range(5)
]
VALIDATION = [{"candidate": "gen3-best", "generation": 3.0, "fitness": 1180.0,
               "fitness_stderr": 15.0}]


@pytest.mark.parametrize("validation", [VALIDATION, []], ids=["validated", "unvalidated"])
def test_the_plot_is_a_png_and_no_temporary_file_remains(tmp_path, validation):
    path = plot_convergence(tmp_path, HISTORY, validation)
    assert path == tmp_path / PLOT_FILE
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert os.listdir(tmp_path) == [PLOT_FILE]


def test_the_plot_has_the_mode_of_the_other_run_files(tmp_path):
    saved = os.umask(0o022)
    try:
        path = plot_convergence(tmp_path, HISTORY, VALIDATION)
    finally:
        os.umask(saved)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_a_failed_write_keeps_the_old_plot_and_leaves_nothing_behind(tmp_path, monkeypatch):
    (tmp_path / PLOT_FILE).write_bytes(b"the old plot")

    def failing_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        plot_convergence(tmp_path, HISTORY, VALIDATION)
    assert (tmp_path / PLOT_FILE).read_bytes() == b"the old plot"
    assert os.listdir(tmp_path) == [PLOT_FILE]
