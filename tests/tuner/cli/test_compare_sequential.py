"""``tune compare --sequential``: it decides early on a clear difference, stops undecided at its
maximum between the margins, reaches the same verdict resumed from ``--save`` and on any number
of workers, plays through an external engine, and refuses a bad setting in one line."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from conftest import run_tune

from engine import Solver
from tuner.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
CANDIDATE = str(ROOT / "runs" / "classic-d1" / "best.yaml")
BASELINE = str(ROOT / "engine" / "baselines" / "classic-reference.yaml")
SEED = 10**9  # tune compare's default first seed


def judged(capsys, *args: str) -> dict:
    """``tune compare CANDIDATE BASELINE --sequential ARGS --json`` at depth 0 in this process,
    on one local worker (no Ray); its report."""
    assert main(["compare", CANDIDATE, BASELINE, "--depth", "0", "--workers", "1", "--json",
                 "--sequential", *args]) == 0
    return json.loads(capsys.readouterr().out)


def counted_part(report: dict) -> dict:
    """The report less what depends on how the games were played: the games finished beyond
    the decided pairs, and the seconds they took."""
    test = {key: value for key, value in report["sequential"].items() if key != "beyond"}
    return {**report, "sequential": test}


def test_a_clear_difference_is_decided_early_on_the_first_pairs(capsys):
    """classic-d1 is about twice classic-reference at depth 0: a 5% gain is accepted after a
    few dozen pairs, where a fixed test of the same error rates needs thousands; the table is
    that of the pairs it decided on."""
    report = judged(capsys, "--gain", "5%", "--games", "1000")
    test = report["sequential"]
    assert test["verdict"] == "gain" and test["reason"].startswith(
        "H1 accepted: best gains at least 5% (+")
    assert 30 <= test["pairs"] < 100 and test["fixed_pairs"] > 1000
    assert test["llr"] >= test["upper"] == pytest.approx(-test["lower"])
    pairs = test["pairs"]
    assert report["seeds"] == [SEED, SEED + pairs - 1]
    assert [p["games"] for p in report["players"]] == [pairs, pairs]
    solver = Solver.from_file(CANDIDATE, depth=0)
    expected = sum(solver.play(seed).score for seed in range(SEED, SEED + pairs)) / pairs
    assert report["players"][0]["mean"] == pytest.approx(expected)
    assert test["gain_points"] == pytest.approx(0.05 * report["players"][1]["mean"])


def test_between_the_margins_it_stops_undecided_at_the_maximum(capsys):
    assert main(["compare", CANDIDATE, BASELINE, "--depth", "0", "--workers", "1", "--games",
                 "40", "--sequential", "--no-gain", "100%", "--gain", "130%", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    verdict = lines[-3:]  # under the table and the paired difference
    assert verdict[0].startswith("sequential test (GSPRT, alpha 0.05, beta 0.05) of best over "
                                 "classic-reference: no gain 100% (+")
    assert verdict[1].startswith("undecided at the maximum of 40 pairs: LLR ")
    assert verdict[1].endswith(" between the bounds -3 and 3")
    assert verdict[2].startswith("pairs spent: 40 of at most 40; a fixed test of the same "
                                 "error rates: ")
    llr = float(verdict[1].split("LLR ")[1].split()[0])
    assert -3 < llr < 3


def test_resumed_from_a_save_it_reaches_the_uninterrupted_verdict(capsys, tmp_path):
    """A save holding the first pairs (a judgement stopped at 40, undecided) and then pairs
    with gaps (a fixed comparison's games, less some of each player): what the test decides
    and on how many pairs is what it decides in one sitting."""
    args = ["--no-gain", "100%", "--gain", "130%"]  # decided after about 130 pairs
    whole = judged(capsys, *args, "--games", "600")
    assert whole["sequential"]["verdict"] != "undecided" and whole["sequential"]["pairs"] > 40
    save = tmp_path / "games.json"
    first = judged(capsys, *args, "--games", "40", "--save", str(save))
    assert first["sequential"]["verdict"] == "undecided"
    went_on = judged(capsys, *args, "--games", "600", "--save", str(save))
    assert counted_part(went_on) == counted_part(whole)

    gaps = tmp_path / "gaps.json"
    assert main(["compare", CANDIDATE, BASELINE, "--depth", "0", "--workers", "1", "--games",
                 "80", "--save", str(gaps), "--quiet"]) == 0
    held = json.loads(gaps.read_text())
    held["games"] = [[g for g in games if (g["seed"] - SEED) % (5 + i) != 3]
                     for i, games in enumerate(held["games"])]
    gaps.write_text(json.dumps(held))
    capsys.readouterr()
    assert counted_part(judged(capsys, *args, "--games", "600", "--save", str(gaps))) == \
        counted_part(whole)


@pytest.mark.ray
def test_on_ray_with_two_workers_it_reaches_the_verdict_of_one(tmp_path, capsys):
    args = ["--gain", "5%", "--games", "1000"]
    here = judged(capsys, *args)
    done = run_tune(["compare", CANDIDATE, BASELINE, "--depth", "0", "--workers", "2", "--json",
                     "--sequential", *args], tmp_path, None)
    assert done.returncode == 0, done.stderr
    assert "games in this process" not in done.stderr  # on Ray
    on_ray = json.loads(done.stdout)
    assert counted_part(on_ray) == counted_part(here)


@pytest.mark.subprocess  # the engine is a process
def test_through_an_external_engine_it_judges_and_resumes(tmp_path, capsys, monkeypatch):
    engine = shlex.join([sys.executable, str(ROOT / "examples" / "engines" /
                                              "python_engine.py")])
    monkeypatch.chdir(tmp_path)
    assert main(["engine", "defaults", "--depth", "0", "-o", "defaults.yaml", "--",
                 *shlex.split(engine)]) == 0
    text = Path("defaults.yaml").read_text()
    Path("tuned.yaml").write_text(text.replace("700.0", "100.0"))
    capsys.readouterr()
    argv = ["compare", "tuned.yaml", "defaults.yaml", "--engine", engine, "--workers", "1",
            "--games", "30", "--sequential", "--no-gain=-50%", "--gain", "50%", "--json",
            "--save", "games.json"]
    assert main(argv) == 0
    first = capsys.readouterr()
    report = json.loads(first.out)
    assert report["players"][0]["engine"] == "python-example 1.0"
    assert report["sequential"]["candidate"] == "tuned"
    assert "games reused from it, " in first.err
    assert main(argv) == 0  # the saved games decide again: nothing is played
    again = capsys.readouterr()
    played = sum(map(len, json.loads(Path("games.json").read_text())["games"]))
    assert f"{played:,} games reused from it, 0 played now and added" in again.err
    assert counted_part(json.loads(again.out)) == counted_part(report)


@pytest.mark.parametrize(("args", "expected"), [
    (["--sequential"], ("--sequential needs --gain: what counts as a gain, in points (5000) "
                        "or in percent of the baseline's mean (5%)")),
    (["--gain", "5%"], "--gain needs --sequential"),
    (["--alpha", "0.1"], "--alpha needs --sequential"),
    (["--sequential", "--gain", "0%"],
     "--gain: expected a gain above the no-gain margin (0%), got 0%"),
    (["--sequential", "--gain", "2%", "--no-gain", "3%"],
     "--gain: expected a gain above the no-gain margin (3%), got 2%"),
    (["--sequential", "--gain", "5%", "--no-gain", "100"],
     ("--gain: expected the same unit as the no-gain margin (both in percent or both in "
      "points), got 5% and +100 points")),
    (["--sequential", "--gain", "lots"],
     "--gain: expected points (5000) or a percentage of the baseline's mean (5%), got 'lots'"),
    (["--sequential", "--gain", "5%", "--no-gain", "nan%"], "--no-gain: expected points"),
    (["--sequential", "--gain", "5%", "--alpha", "0.5"],
     "--alpha: expected an error rate in (0, 0.5), got 0.5"),
    (["--sequential", "--gain", "5%", "--beta", "0"],
     "--beta: expected an error rate in (0, 0.5), got 0.0"),
    (["--sequential", "--gain", "5%", "--beta", "nan"],
     "--beta: expected an error rate in (0, 0.5), got nan"),
    (["--sequential", "--gain", "5%", "--games", "20"], "--games must be at least 30"),
    ([BASELINE, "--sequential", "--gain", "5%"],
     "--sequential compares two weights files, a candidate then its baseline, got 3"),
])
def test_a_bad_setting_is_one_line_and_exit_2_with_nothing_played_or_written(
        args, expected, capsys, monkeypatch, tmp_path):
    import tuner.cluster.ray_evaluator
    from tuner.games import evaluation

    def nothing_played(*args, **kwargs):
        raise AssertionError("games played")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", nothing_played)
    monkeypatch.setattr(evaluation.SerialEvaluator, "run", nothing_played)
    save = tmp_path / "games.json"
    assert main(["compare", CANDIDATE, BASELINE, *args, "--save", str(save)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"tune: error: {expected}") and err.count("\n") == 1, err
    assert not save.exists()
