"""`tune compare`: paired statistics, and the command on real weights files."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from engine import Solver
from tuner.compare import labels_for, paired_difference

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ROOT / "configs" / "weights"


def test_paired_difference_mean_interval_and_p_value():
    a = [10.0, 12.0, 14.0, 16.0]
    b = [9.0, 10.0, 11.0, 12.0]
    result = paired_difference(a, b)
    diffs = [1.0, 2.0, 3.0, 4.0]
    sd = math.sqrt(sum((d - 2.5) ** 2 for d in diffs) / 3)
    assert result["mean_difference"] == 2.5
    assert result["ci95"] == pytest.approx(1.959963984540054 * sd / 2)
    z = 2.5 / (sd / 2)
    assert result["p_value"] == pytest.approx(math.erfc(z / math.sqrt(2)))


def test_identical_players_have_no_difference():
    result = paired_difference([5.0, 7.0, 9.0], [5.0, 7.0, 9.0])
    assert result["mean_difference"] == 0 and result["p_value"] == 1.0


def test_labels_disambiguate_repeated_stems():
    assert labels_for(["a/best.yaml", "b/best.yaml", "c/x.yaml"]) == ["a/best", "b/best", "x"]


def test_compare_plays_every_file_on_the_same_seeds():
    files = [WEIGHTS / "classic-reference.yaml", WEIGHTS / "seed002-snake.yaml"]
    done = subprocess.run(
        [sys.executable, "-m", "tuner.cli", "compare", *map(str, files), "--depth", "0",
         "--games", "30", "--seed", "500", "--workers", "2", "--json"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    classic, snake = report["players"]
    expected = [Solver.from_file(files[0], depth=0).play(seed).score for seed in range(500, 530)]
    assert classic["games"] == 30 and classic["mean"] == pytest.approx(sum(expected) / 30)
    assert snake["family"] == "snake" and snake["depth"] == 0
    [pair] = report["pairs"]
    assert pair["mean_difference"] == pytest.approx(classic["mean"] - snake["mean"])
    assert 0.0 <= pair["p_value"] <= 1.0


def test_compare_refuses_too_few_games_for_a_paired_test():
    done = subprocess.run(
        [sys.executable, "-m", "tuner.cli", "compare", str(WEIGHTS / "classic-reference.yaml"),
         "--games", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert "--games must be at least 30" in done.stderr and "Traceback" not in done.stderr
