"""`tune compare`: paired statistics, and the command on real weights files."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import main
from engine import Solver
from tuner.compare import labels_for, paired_difference

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = ROOT / "engine" / "baselines"


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
        [sys.executable, "-m", "cli", "compare", *map(str, files), "--depth", "0",
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


def test_compare_at_a_depth_policy_records_it():
    files = [WEIGHTS / "classic-reference.yaml", WEIGHTS / "seed002-snake.yaml"]
    done = subprocess.run(
        [sys.executable, "-m", "cli", "compare", *map(str, files), "--depth", "nodes:2000",
         "--games", "30", "--workers", "1", "--json"],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    classic, snake = json.loads(done.stdout)["players"]
    assert classic["depth"] == snake["depth"] == "nodes:2000"
    solver = Solver.from_file(files[0], depth="nodes:2000")
    expected = [solver.play(seed).score for seed in range(10**9, 10**9 + 30)]
    assert classic["mean"] == pytest.approx(sum(expected) / 30)


def test_compare_refuses_too_few_games_for_a_paired_test():
    done = subprocess.run(
        [sys.executable, "-m", "cli", "compare", str(WEIGHTS / "classic-reference.yaml"),
         "--games", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert "--games must be at least 30" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--cutoff", "2"], "--cutoff must be in [0, 1) (0: exact search), got 2.0"),
        (["--cutoff", "nan"], "--cutoff must be in [0, 1)"),
        (["--seed", "-1"], "--seed must be from 0 to 2**64 - GAMES"),
        (["--seed", str(2**64 - 10)], "--seed must be from 0 to 2**64 - GAMES"),
        (["--games", "10000000000"], "--games must be from 30 to 1,000,000, got 10000000000"),
        (["--workers", "0"], "--workers must be from 1 to 4,096, got 0"),
        (["--address", "localhost"], "--address must be 'auto' or HOST:PORT, got 'localhost'"),
        (["--depth", "9"], "--depth must be from 0 to 8, got 9"),
    ],
)
def test_bad_arguments_are_refused_before_ray_starts(args, expected, capsys, monkeypatch):
    import tuner.evaluation

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started")

    monkeypatch.setattr(tuner.evaluation, "RayEvaluator", no_ray)
    reference = str(WEIGHTS / "classic-reference.yaml")
    assert main(["compare", reference, reference, *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tune: error: {expected}") and err.count("\n") == 1, err


def test_weights_whose_heuristic_is_not_finite_name_the_file_and_the_weight(tmp_path, capsys):
    text = (WEIGHTS / "classic-reference.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("monotonicity_power: 4.0", "monotonicity_power: 1000.0"))
    assert "1000.0" in bad.read_text()
    assert main(["compare", str(WEIGHTS / "classic-reference.yaml"), str(bad)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tune: error: {bad}: weights.monotonicity_power: at 1000 the "
                           "heuristic is not finite")


def test_the_report_says_what_its_intervals_are_and_reads_as_people_write_numbers():
    from tuner.compare import format_report

    player = {"name": "tuned", "depth": 3, "games": 1000, "mean": 151_315.4, "ci95": 4_332.1,
              "median": 150_020.0, "reach": {"2048": 0.996, "4096": 0.95, "8192": 0.723,
                                             "16384": 0.1}, "mean_moves": 7_321.0}
    pair = {"a": "tuned", "b": "reference", "mean_difference": 19_610.2, "ci95": 3_120.4,
            "p_value": 3e-12}
    text = format_report({"players": [player], "pairs": [pair]})
    assert text.splitlines()[0] == ("scores on the same seeds; +/- is the half-width of a 95% "
                                    "confidence interval")
    assert text.splitlines()[2].split()[:6] == ["tuned", "3", "1,000", "151,315", "4,332",
                                                "150,020"]
    assert text.splitlines()[-1] == "tuned - reference: +19,610 +/- 3,120   p < 0.0001"
    assert "e-" not in text and "e+" not in text
