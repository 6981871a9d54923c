"""`tune noise`: the per-game spread at the initial point and the games it recommends; how
reliably the first generation's games rank its candidates, and what it says about strategies."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import run_tune

from tuner.analysis.noise import (
    Measured,
    candidate_spread,
    games_for_correlation,
    rank_correlation,
    recommend_games,
)
from tuner.cli.main import main
from tuner.games.fitness import Fitness

ROOT = Path(__file__).resolve().parents[3]


def test_recommendation_follows_the_standard_error_of_a_mean():
    # sd 0.5 x mean, target 2%: n = (0.5 / 0.02)^2 = 625 games
    assert recommend_games(40_000.0, 20_000.0, 0.02) == 625
    assert recommend_games(40_000.0, 20_000.0, 0.05) == 100
    assert recommend_games(10.0, 0.0, 0.02) == 1


@pytest.mark.parametrize("target", [1e-4, 1e-300, 5e-324])
def test_a_recommendation_beyond_what_a_config_allows_is_none_not_an_overflow(target):
    assert recommend_games(40_000.0, 20_000.0, target) is None  # 25 million games and more
    assert recommend_games(40_000.0, 20_000.0, 0.0016) == 97_657  # just within 100,000


@pytest.mark.parametrize("games", [24, {"min": 8, "max": 32}], ids=["fixed", "adaptive"])
@pytest.mark.subprocess
def test_noise_command_measures_the_initial_point(tmp_path, games):
    config = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    config["search"]["depth"] = 0
    config["evaluation"]["games"] = games
    path = tmp_path / "noise.yaml"
    path.write_text(yaml.safe_dump(config))
    done = run_tune(["noise", "--config", str(path), "--games", "40", "--target", "0.05",
                     "--workers", "2"], tmp_path, None)
    assert done.returncode == 0, done.stderr
    lines = {line.split(":")[0]: line for line in done.stdout.splitlines()}
    spread = float(lines["per-game spread"].split("=")[1].split("x")[0])
    recommended = int(lines["games per candidate for a 5.0% standard error of its mean"]
                      .split(":", 1)[1].split()[0])
    assert "recommended" not in done.stdout  # the generation's lines give the one advice
    assert 0.1 < spread < 2.0
    # the printed spread is rounded to 2 decimals: n = (spread / target)^2 within that rounding
    assert ((spread - 0.005) / 0.05) ** 2 <= recommended <= ((spread + 0.005) / 0.05) ** 2 + 1
    assert not (tmp_path / "runs").exists()  # measuring writes no run directory
    configured = [line.split(":")[0] for line in done.stdout.splitlines()
                  if line.startswith("configured games per candidate")]
    assert configured == (["configured games per candidate"] if games == 24 else
                          ["configured games per candidate (min)",
                           "configured games per candidate (max)"])
    # the first generation: quick.yaml's 6 candidates on the games the run gives each first
    first = 24 if games == 24 else 8
    assert lines["first generation (fixed)" if games == 24 else "first generation (racing)"
                 ].split(": ", 1)[1].startswith(f"6 candidates x {first} games, mean ")
    correlation = float(lines[f"rank correlation (measured against true fitness) at {first} "
                              "games per candidate"].rsplit(":", 1)[1])
    assert 0.0 <= correlation < 1.0
    assert lines["ranks"].startswith("ranks: ")


@pytest.mark.ray
def test_the_generation_can_be_skipped_and_auto_popsize_is_resolved_for_the_cpus(tmp_path):
    from tuner.config import parse_config
    from tuner.loop.run import popsize_for

    document = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    document["search"]["depth"] = 0
    document["cmaes"]["popsize"] = "auto"
    path = tmp_path / "auto.yaml"
    path.write_text(yaml.safe_dump(document))
    command = ["noise", "--config", str(path), "--games", "20"]
    done = run_tune([*command, "--workers", "2", "--generation-games", "4"], tmp_path, None)
    assert done.returncode == 0, done.stderr
    popsize = popsize_for(parse_config(document, "auto"), 2)
    assert f"first generation (fixed): {popsize} candidates x 4 games" in done.stdout
    skipped = run_tune([*command, "--workers", "1", "--generation-games", "0"], tmp_path, None)
    assert skipped.returncode == 0, skipped.stderr
    assert "per-game spread" in skipped.stdout
    assert "first generation" not in skipped.stdout and "ranks" not in skipped.stdout


def test_noise_measures_at_the_depth_asked(tmp_path, no_ray):
    """On one local worker, in this process: Ray (the stand-in that exits) is never started."""
    done = run_tune(["noise", "--config", str(ROOT / "configs" / "quick.yaml"), "--depth",
                     "nodes:500", "--games", "8", "--generation-games", "0", "--workers", "1"],
                    tmp_path, no_ray)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("initial point of ")
    assert ": classic at depth nodes:500\n" in done.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--depth", "auto:cap=1"], "--depth: auto: cap 1 is below the floor 3"),
        (["--depth", "6"], "--depth: expected an integer from 0 to 5 in a tuning run, got 6"),
        (["--depth", "auto"], ("--depth: expected the board rule capped at 5 or less in a tuning "
                              "run (e.g. auto:cap=5; uncapped, a move late in a game searches up "
                              "to 14 layers: minutes), got auto")),
        (["--generation-games", "1"],
         "--generation-games must be 0 (skip) or from 2 to 1,000,000, got 1"),
        (["--generation-games", "-3"],
         "--generation-games must be 0 (skip) or from 2 to 1,000,000, got -3"),
        (["--workers", "0"], "--workers: expected an integer from 1 to 4096, got 0"),
        (["--address", "localhost"], "--address: expected 'auto', HOST:PORT or local, got 'localhost'"),
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
    from tuner.analysis.noise import format_noise
    from tuner.config import parse_config

    config = parse_config(yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text()), "quick")
    text = format_noise(config, Measured(Fitness(33_820.0, 1_800.0, 200), (), 6), 0.02)
    assert "over 200 games: 33,820 +/- 3,528 (95% CI)" in text  # 1.96 x 1,800
    alike = format_noise(config, Measured(Fitness(1.0, 0.0, 50), (), 6), 0.02)  # all reached
    assert "over 50 games: 1 (no spread in 50 games: no interval)" in alike
    assert "sd 25,456 = 0.75 x mean" in text  # 1,800 x sqrt(200)
    assert "e+" not in text
    tiny = format_noise(config, Measured(Fitness(33_820.0, 1_800.0, 200), (), 6), 1e-300)
    assert ("recommended games per candidate for a 1e-298% standard error: more than 100,000, "
            "the most evaluation.games allows: out of reach") in tiny


# ---- the first generation: how reliably its games rank the candidates ------------------------

def test_rank_correlation_is_what_sampled_candidates_show():
    # candidates whose true fitness differs by sd 1,000, each measured on n games of per-game
    # sd 20,000: the correlation of measured with true fitness over many generations
    rng = np.random.default_rng(7)
    spread, per_game_sd = 1_000.0, 20_000.0
    for games in (16, 400, 4_000):
        true = rng.normal(40_000.0, spread, size=(2_000, 12))
        measured = true + rng.normal(0.0, per_game_sd / math.sqrt(games), size=true.shape)
        sampled = np.mean([np.corrcoef(t, m)[0, 1] for t, m in zip(true, measured)])
        assert rank_correlation(spread, per_game_sd, games) == pytest.approx(sampled, abs=0.03)


def test_games_for_a_correlation_are_the_fewest_that_reach_it():
    for spread, sd, target in [(1_000.0, 20_000.0, 0.9), (500.0, 25_000.0, 0.7),
                               (3_000.0, 10_000.0, 0.5)]:
        games = games_for_correlation(spread, sd, target)
        assert rank_correlation(spread, sd, games) >= target
        assert games == 1 or rank_correlation(spread, sd, games - 1) < target
    # (sd / spread)^2 x r^2 / (1 - r^2) = 400 x 0.81 / 0.19 = 1,705.3: 1,706 games
    assert games_for_correlation(1_000.0, 20_000.0, 0.9) == 1_706
    assert games_for_correlation(0.0, 20_000.0, 0.9) is None
    assert rank_correlation(0.0, 20_000.0, 100) == 0.0


def test_the_spread_of_true_fitness_is_what_is_left_when_the_noise_is_taken_out():
    rng = np.random.default_rng(11)
    true = rng.normal(40_000.0, 2_000.0, size=4_000)
    stderr = 20_000.0 / math.sqrt(64)
    candidates = tuple(Fitness(float(v), stderr, 64) for v in true + rng.normal(
        0.0, stderr, size=true.size))
    assert candidate_spread(candidates) == pytest.approx(2_000.0, rel=0.05)
    # measured values spread less than their noise says: no measurable difference
    alike = tuple(Fitness(40_000.0 + d, 5_000.0, 16) for d in (-100.0, 0.0, 100.0))
    assert candidate_spread(alike) == 0.0


def generation(spread_of_values: float, stderr: float, games: int) -> tuple[Fitness, ...]:
    values = 40_000.0 + spread_of_values * np.array([-1.5, -0.5, 0.5, 1.5]) / math.sqrt(5 / 3)
    return tuple(Fitness(float(v), stderr, games) for v in values)


@pytest.mark.parametrize(
    ("spread_of_values", "verdict"),
    [(60_000.0, ("ranks: reliable at the configured 24 games, now and once the step size has "
                 "shrunk 4-fold")),
     (12_000.0, ("ranks: reliable at the configured 24 games now, but not once the step size "
                 "has shrunk; measured, that is no reason for more games")),
     (5_000.0, ("ranks: unreliable at the configured 24 games from the first generation: play "
                "about ")),
     (100.0, "ranks: the candidates do not differ measurably over 24 games each")],
)
def test_what_the_generation_says_about_games_and_strategies(spread_of_values, verdict):
    from tuner.analysis.noise import format_noise
    from tuner.config import parse_config

    config = parse_config(yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text()), "quick")
    stderr = 20_000.0 / math.sqrt(24)  # about 4,082: the noise's share of the variance
    measured = Measured(Fitness(40_000.0, 1_000.0, 400), generation(spread_of_values, stderr, 24),
                        6)
    text = format_noise(config, measured, 0.02)
    assert "first generation (fixed): 4 candidates x 24 games, mean 40,000" in text
    assert verdict in text
    if "do not differ" not in verdict:
        now, later = (int(text.split(key)[1].split()[0].replace(",", ""))
                      for key in ("rank correlation of 0.9: ", "; at least "))
        assert f"{now:,} now ({now * 6:,} games a generation of 6)" in text
        assert later == 16 * now  # a quarter of the step size: candidates differ 4x less
        assert (now <= 24) == ("unreliable" not in verdict)
        assert (later <= 24) == ("now and once" in verdict)


def test_noise_counts_every_game_it_plays_on_a_progress_bar(tmp_path, monkeypatch):
    from tuner.analysis import noise
    from tuner.config import load_config
    from tuner.games import progress

    document = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text())
    document["search"]["depth"] = 0
    document["ray"] = {"workers": 1}  # in this process
    (tmp_path / "quick.yaml").write_text(yaml.safe_dump(document))
    bars = []

    class Bar(progress.GameBar):
        def __init__(self, desc, total, **options):
            super().__init__(desc, total, **options)
            self.desc, self.total, self.counted = desc, total, 0
            bars.append(self)

        def update(self, count=1):
            self.counted += count

    monkeypatch.setattr(progress, "GameBar", Bar)
    measured = noise.measure(load_config(tmp_path / "quick.yaml"), 20, 4)
    [bar] = bars
    assert (bar.desc, bar.total, bar.counted) == ("noise", 20 + measured.popsize * 4,
                                                  20 + measured.popsize * 4)
