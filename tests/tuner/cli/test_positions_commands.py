"""``tune positions build`` and ``tune positions show``, in this process (--workers 1: no Ray;
Ray plays a sampler's units as it plays games: tests/tuner/games/test_evaluation.py)."""

from __future__ import annotations

import json
from pathlib import Path

from engine.positions.set_file import read_positions
from tuner.cli.main import main
from tuner.games.seeds import position_seeds

ROOT = Path(__file__).resolve().parents[3]
BUILD = ["positions", "build", "--player", "classic-reference", "--depth", "0", "--oracle",
         "classic-reference", "--oracle-depth", "1", "--games", "4", "--every", "6",
         "--seed", "5", "--workers", "1"]


def test_build_writes_a_set_show_says_what_it_holds_and_a_second_build_adds_nothing(
        tmp_path, capsys):
    path = tmp_path / "set.npz"
    assert main([*BUILD, "--output", str(path)]) == 0
    built = read_positions(path)
    first = capsys.readouterr().out
    assert first.startswith(f"wrote {path}: {built.positions:,} positions from 4 games (0 of "
                            "them there already), labelled by classic at depth 1; it cost ")
    assert [int(s) for s in built.arrays["seeds"]] == position_seeds(5, 4)
    assert built.sampler["player"]["depth"] == 0 and built.sampler["every"] == 6

    before = path.read_bytes()
    assert main([*BUILD, "--output", str(path)]) == 0
    assert "(4 of them there already)" in capsys.readouterr().out
    assert path.read_bytes() == before

    assert main(["positions", "show", str(path)]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == f"{path}: {built.positions:,} positions from 4 of 4 games"
    assert shown[1] == ("player: classic at depth 0, a position taken with probability 1/6; "
                        "games from set seed 5")
    assert shown[2] == "oracle: classic at depth 1"
    assert main(["positions", "show", str(path), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["complete"] and summary["positions"] == built.positions
    assert summary["cost"]["oracle_positions"] == built.cost["oracle_positions"] > 0


def test_score_says_each_objective_of_each_file(tmp_path, capsys):
    path = tmp_path / "set.npz"
    assert main([*BUILD, "--output", str(path)]) == 0
    capsys.readouterr()
    assert main(["positions", "score", str(path), "classic-reference", "seed000-snake",
                 "--depth", "1", "--json"]) == 0
    oracle, snake = json.loads(capsys.readouterr().out)
    # the oracle's own weights at its own depth pick its best move everywhere
    assert (oracle["regret"]["value"], oracle["agreement"]["value"]) == (0.0, 1.0)
    assert snake["regret"]["value"] < 0 and snake["agreement"]["value"] < 1
    assert oracle["regret"]["games"] == 4 and oracle["depth"] == 1
    assert main(["positions", "score", str(path), "classic-reference", "--depth", "1"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].split() == ["weights", "depth", "regret", "agreement", "outcome_fit"]
    assert table[2].split()[:3] == ["classic-reference", "1", "0"]


def test_an_unfinished_set_is_not_scored(tmp_path, capsys):
    from engine.positions.set_file import PositionSet, write_positions

    path = tmp_path / "set.npz"
    write_positions(path, PositionSet.from_games({}, 1, 3, "0.1.0", []))
    assert main(["positions", "score", str(path), "classic-reference"]) == 2
    assert capsys.readouterr().err == (
        f"tune: error: {path}: holds 0 of its 3 games: finish it first with the tune positions "
        "build command that began it\n")


def test_an_engines_weights_cannot_label_positions(tmp_path, capsys):
    engine_weights = ROOT / "tests" / "data" / "weights" / "engine-v3.yaml"
    path = tmp_path / "set.npz"
    args = [*BUILD, "--output", str(path)]
    args[args.index("--oracle") + 1] = str(engine_weights)
    assert main(args) == 2
    assert capsys.readouterr().err == (f"tune: error: {engine_weights}: holds weights of engine "
                                       "'c-example 1.0': name the command that starts it "
                                       "with --engine COMMAND\n")
    assert not path.exists()


def test_a_position_runs_price_and_noise_say_what_they_do_not_model(tmp_path, capsys):
    import shutil

    import yaml

    shutil.copy(ROOT / "tests" / "data" / "positions" / "classic-v1.npz", tmp_path / "set.npz")
    config = tmp_path / "pos.yaml"
    config.write_text(yaml.safe_dump({
        "run": {"name": "pos", "seed": 1, "output_dir": str(tmp_path / "out")},
        "family": "classic",
        "params": {"empty_weight": {"init": 270, "low": 10, "high": 10000, "scale": "log"},
                   "merges_weight": {"init": 700, "low": 10, "high": 10000, "scale": "log"}},
        "search": {"depth": 1}, "evaluation": {"fitness": "outcome_fit", "games": 2},
        "positions": {"set": "set.npz"}, "cmaes": {"popsize": 4, "max_generations": 2}}))
    assert main(["--config", str(config), "--dry-run"]) == 0
    assert capsys.readouterr().out == (
        "price: not estimated for a position fitness (outcome_fit): each generation scores "
        "every candidate on 2 games of the set's 2 (120 positions in all), and validation plays "
        "500 games a candidate (what one candidate's positions cost: tune positions score "
        "--help)\n")
    assert main(["noise", "--config", str(config)]) == 2
    assert "tune noise measures the noise of games; that of outcome_fit on a position set is" \
        in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
