"""``tune report``: a plot asked for is written, or the command fails saying why."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tuner import installed
from tuner.analysis.report import PLOT_FILE
from tuner.cli.main import main

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def no_matplotlib(monkeypatch):
    """This process as one without the plot extra: every import of matplotlib fails."""
    for name in [name for name in sys.modules if name.partition(".")[0] == "matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)


@pytest.mark.parametrize("where", ["in the run directory", "to a file"])
def test_a_plot_asked_for_without_matplotlib_is_an_error_naming_the_install_command(
        tmp_path, capsys, no_matplotlib, where):
    run_dir = tmp_path / "classic-d1"
    shutil.copytree(ROOT / "runs" / "classic-d1", run_dir,
                    ignore=shutil.ignore_patterns(PLOT_FILE))
    before = sorted(tmp_path.rglob("*"))
    plot = run_dir / PLOT_FILE if where == "in the run directory" else tmp_path / "plot.png"
    option = ["--plot"] if where == "in the run directory" else ["--plot", str(plot)]

    assert main(["report", str(run_dir), *option]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # refused before the report: nothing printed, nothing written
    assert err == (f"tune: error: --plot: {plot} not written: matplotlib is not installed; "
                   f"install it with: {installed.install_command('plot')}\n")
    assert sorted(tmp_path.rglob("*")) == before


def test_a_shipped_run_of_an_older_tune2048_reports_as_before_and_that_its_start_was_not_validated(
        capsys):
    assert main(["report", str(ROOT / "runs" / "classic-d3")]) == 0
    lines = capsys.readouterr().out.splitlines()
    winner = [line.split()[:2] for line in lines if line.endswith("<- winner")]
    assert winner == [["elite", "2"]]  # its best.yaml's candidate
    assert "the start was not validated (a run of tune2048 before 0.4): no gain over it to " \
           "judge" in lines
