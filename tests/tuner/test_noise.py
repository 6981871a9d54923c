"""`tune noise`: the per-game spread at the initial point and the games it recommends."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cli.main import main
from tuner.noise import recommend_games

ROOT = Path(__file__).resolve().parents[2]


def test_recommendation_follows_the_standard_error_of_a_mean():
    # sd 0.5 x mean, target 2%: n = (0.5 / 0.02)^2 = 625 games
    assert recommend_games(40_000.0, 20_000.0, 0.02) == 625
    assert recommend_games(40_000.0, 20_000.0, 0.05) == 100
    assert recommend_games(10.0, 0.0, 0.02) == 1


@pytest.mark.parametrize("games", [24, {"min": 8, "max": 32}], ids=["fixed", "adaptive"])
def test_noise_command_measures_the_initial_point(tmp_path, games):
    config = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    config["search"]["depth"] = 0
    config["evaluation"]["games"] = games
    path = tmp_path / "noise.yaml"
    path.write_text(yaml.safe_dump(config))
    done = subprocess.run(
        [sys.executable, "-m", "cli", "noise", "--config", str(path), "--games", "40",
         "--target", "0.05", "--workers", "2"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = {line.split(":")[0]: line for line in done.stdout.splitlines()}
    spread = float(lines["per-game spread"].split("=")[1].split("x")[0])
    recommended = int(lines["recommended games per candidate for a 5.0% standard error"]
                      .rsplit(":", 1)[1])
    assert 0.1 < spread < 2.0
    # the printed spread is rounded to 2 decimals: n = (spread / target)^2 within that rounding
    assert ((spread - 0.005) / 0.05) ** 2 <= recommended <= ((spread + 0.005) / 0.05) ** 2 + 1
    assert not (tmp_path / "runs").exists()  # measuring writes no run directory
    configured = [line.split(":")[0] for line in done.stdout.splitlines()
                  if line.startswith("configured games per candidate")]
    assert configured == (["configured games per candidate"] if games == 24 else
                          ["configured games per candidate (min)",
                           "configured games per candidate (max)"])


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--workers", "0"], "--workers must be from 1 to 4,096, got 0"),
        (["--games", "1"], "--games must be from 2 to 1,000,000, got 1"),
        (["--games", "10000000000"], "--games must be from 2 to 1,000,000, got 10000000000"),
        (["--target", "0"], "--target must be in (0, 1), got 0.0"),
        (["--target", "nan"], "--target must be in (0, 1), got nan"),
    ],
)
def test_bad_arguments_are_refused_before_anything_runs(args, expected, capsys):
    assert main(["noise", "--config", str(ROOT / "configs" / "quick.yaml"), *args]) == 2
    assert capsys.readouterr().err == f"tune: error: {expected}\n"


def test_the_config_is_required(capsys):
    assert main(["noise"]) == 2
    assert capsys.readouterr().err == ("tune: error: --config FILE is required: "
                                       "tune noise --config FILE\n")


def test_the_measurement_reads_as_people_write_numbers_with_a_95_percent_interval():
    from tuner.config import parse_config
    from tuner.fitness import Fitness
    from tuner.noise import format_noise

    config = parse_config(yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text()), "quick")
    text = format_noise(config, Fitness(33_820.0, 1_800.0, 200), 0.02)
    assert "over 200 games: 33,820 +/- 3,528 (95% confidence interval)" in text  # 1.96 x 1,800
    assert "sd 25,456 = 0.75 x mean" in text  # 1,800 x sqrt(200)
    assert "e+" not in text
