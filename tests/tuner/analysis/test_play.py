"""``tune play`` (tuner.analysis.play, reached through tuner.cli.main)."""

import dataclasses
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import TWIN

from engine.board import format_board, parse_board_text
from engine.rules import Move
from engine.solver import Solver
from tuner.cli.main import main

REPO_ROOT = Path(__file__).resolve().parents[3]
CLASSIC_REFERENCE = str(REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml")
BOARD_TEXT = "2 0 0 2 / 0 4 0 0 / 0 0 0 0 / 0 0 0 8"


def play_json(capsys, *args: str) -> dict:
    assert main(["play", *args, "--json"]) == 0
    out = capsys.readouterr().out
    return json.loads(out)


def test_play_prints_a_summary_table(capsys):
    assert main(["play", "--weights", CLASSIC_REFERENCE, "--depth", "0", "--games", "3"]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "classic at depth 0" in lines["player"]
    assert lines["games"].split() == ["games", "3"]
    scores = [Solver.from_file(CLASSIC_REFERENCE, depth=0).play(s).score for s in range(3)]
    assert f"{statistics.fmean(scores):,.0f}" in lines["mean"]
    assert f"{statistics.median(scores):,.0f}" in lines["median"]


def test_play_json_mean_is_the_mean_of_the_games(capsys):
    summary = play_json(
        capsys, "--weights", CLASSIC_REFERENCE, "--depth", "0", "--games", "3", "--seed", "40"
    )
    solver = Solver.from_file(CLASSIC_REFERENCE, depth=0)
    results = [solver.play(seed) for seed in (40, 41, 42)]
    assert summary["games"] == 3
    assert summary["family"] == "classic"
    assert summary["depth"] == 0
    assert summary["mean"] == pytest.approx(statistics.fmean(r.score for r in results))
    assert summary["median"] == pytest.approx(statistics.median(r.score for r in results))
    assert summary["mean_moves"] == pytest.approx(statistics.fmean(r.moves for r in results))
    assert sum(summary["max_tiles"].values()) == 3
    for tile, share in summary["reach"].items():
        assert share == pytest.approx(sum(r.max_tile >= int(tile) for r in results) / 3)


def test_play_uses_the_depth_of_the_weights_file(capsys):
    summary = play_json(capsys, "--weights", CLASSIC_REFERENCE, "--games", "1")
    assert summary["depth"] == 2


@pytest.mark.parametrize("policy", ["nodes:3000", "auto:floor=1,offset=10,cap=2"])
def test_play_at_a_depth_policy_plays_the_solvers_games_and_names_the_policy(capsys, policy):
    summary = play_json(capsys, "--weights", CLASSIC_REFERENCE, "--depth", policy, "--games", "2")
    assert summary["depth"] == policy
    solver = Solver.from_file(CLASSIC_REFERENCE, depth=policy)
    assert summary["mean"] == pytest.approx(statistics.fmean(solver.play(s).score for s in (0, 1)))
    assert main(["play", "--weights", CLASSIC_REFERENCE, "--depth", policy, "--games", "1"]) == 0
    assert f"classic at depth {policy}, cutoff" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["json.py", "my-family.py"])
def test_play_takes_a_family_file_of_any_name(tmp_path, capsys, name):
    path = tmp_path / name
    path.write_text(TWIN.format(cls="F", name="odd", param="w"), encoding="utf-8")
    summary = play_json(capsys, "--family", f"{path}:F", "--depth", "0", "--games", "2")
    assert summary["family"] == "odd" and summary["games"] == 2


def test_play_with_family_defaults(capsys):
    summary = play_json(capsys, "--family", "snake", "--depth", "0", "--games", "2")
    assert summary["family"] == "snake"
    solver = Solver("snake", depth=0)
    assert summary["mean"] == pytest.approx(statistics.fmean(solver.play(s).score for s in (0, 1)))


@pytest.mark.ray
def test_two_workers_play_the_same_games_as_one(capsys):
    args = ("--family", "classic", "--depth", "0", "--games", "6", "--seed", "100")
    one = play_json(capsys, *args, "--workers", "1")
    two = play_json(capsys, *args, "--workers", "2")
    for key in ("games", "mean", "median", "ci95", "reach", "max_tiles", "mean_moves"):
        assert one[key] == two[key], key


def test_board_advice_prints_each_move_value_and_marks_the_best(capsys):
    assert (
        main(["play", "--weights", CLASSIC_REFERENCE, "--depth", "1", "--board", BOARD_TEXT]) == 0
    )
    out = capsys.readouterr().out
    board = parse_board_text(BOARD_TEXT)
    assert out.startswith(format_board(board))
    solver = Solver.from_file(CLASSIC_REFERENCE, depth=1)
    values = solver.move_values(board)
    best = solver.best_move(board)
    lines = {line.split(":")[0].strip(): line for line in out.splitlines() if ":" in line}
    for move in Move:
        line = lines[str(move)]
        assert f"{values[move]:,.1f}" in line
        assert ("<- best" in line) == (move == best)
    assert out.count("<- best") == 1


def test_board_advice_on_a_dead_board(capsys):
    dead = "2 4 2 4 / 4 2 4 2 / 2 4 2 4 / 4 2 4 2"
    assert main(["play", "--depth", "0", "--board", dead]) == 0
    out = capsys.readouterr().out
    assert out.count("illegal") == 4
    assert "<- best" not in out
    assert "no legal move" in out


def test_watch_plays_the_game_of_the_seed(capsys):
    assert main(["play", "--family", "classic", "--depth", "0", "--watch", "--delay", "0"]) == 0
    out = capsys.readouterr().out
    result = Solver("classic", depth=0).play(0)
    assert f"game over: score {result.score:,}, max tile {result.max_tile}" in out
    assert out.count("next move:") == result.moves


def resolve(arg: str, tmp_path: Path) -> str:
    """Stand-ins for files made per test: {missing} does not exist, {nan} holds a NaN weight."""
    if arg == "{missing}":
        return str(tmp_path / "missing.yaml")
    if arg == "{nan}":
        path = tmp_path / "nan.yaml"
        text = Path(CLASSIC_REFERENCE).read_text()
        path.write_text(text.replace("sum_weight: 11.0", "sum_weight: .nan"))
        return str(path)
    return arg


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--board", "2 0 0 3 / 0 4 0 0 / 0 0 0 0 / 0 0 0 8"], "cell (0, 3)"),
        (["--board", "2 0 0 2 / 0 4 0 0 / 0 0 0 0"], "4 rows"),
        (["--board", "2 0 0 2 / 0 4 0 / 0 0 0 0 / 0 0 0 8"], "row 1"),
        (["--weights", "{missing}"], "missing.yaml"),
        (["--weights", "{nan}"], "weights.sum_weight"),
        (["--games", "0"], "--games"),
        (["--workers", "0"], "--workers"),
        (["--workers", "5000"], "--workers: expected an integer from 1 to 4096, got 5000"),
        (["--address", "localhost"], "--address: expected 'auto', HOST:PORT or local, got 'localhost'"),
        (["--depth", "9"], "--depth: expected an integer from 0 to 8, got 9"),
        (["--depth=-1"], "--depth: expected an integer from 0 to 8, got -1"),
        (["--depth", "deep"], ("--depth: expected an integer, auto, auto:cap=N (or floor=N, "
                              "offset=N) or nodes:N, got 'deep'")),
        (["--depth", "auto:cap=4,cap=5"], "--depth: auto: cap is given twice"),
        (["--depth", "auto:cap=2"], "--depth: auto: cap 2 is below the floor 3"),
        (["--depth", "nodes:0"], "--depth: nodes: expected an integer from 1 to"),
        (["--cutoff", "1.5"], "--cutoff"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, tmp_path, args, expected):
    # "--depth 0" first keeps any game cheap; a later --depth overrides it
    assert main(["play", "--depth", "0", *(resolve(a, tmp_path) for a in args)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    err = captured.err
    assert err.startswith("tune: error: ")
    assert err.endswith("\n")
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    assert expected in err


def test_a_weight_too_large_for_a_float_exits_2(capsys, tmp_path):
    path = tmp_path / "big.yaml"
    text = Path(CLASSIC_REFERENCE).read_text()
    path.write_text(text.replace("sum_weight: 11.0", "sum_weight: 1" + "0" * 400))
    try:
        status = main(["play", "--weights", str(path), "--depth", "0", "--games", "1"])
    except OverflowError:
        status = "OverflowError"
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("tune: error: ") and "weights.sum_weight" in err


@pytest.mark.subprocess
def test_one_worker_plays_in_this_process_and_starts_no_ray():
    """docs/cli.md's promise: with its default one worker, tune play opens no port."""
    code = ("import sys; from tuner.cli.main import main; "
            "code = main(['play', '--family', 'classic', '--depth', '0', '--games', '2']); "
            "print('ray imported' if 'ray' in sys.modules else 'no ray', code)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, check=True)
    assert done.stdout.splitlines()[-1] == "no ray 0"


def test_the_summary_reads_as_people_write_numbers():
    from engine.solver import PlayerSpec
    from engine.stats import Summary
    from tuner.analysis.play import format_summary

    summary = Summary(games=1000, mean=33_820.4, median=30_114.0, stdev=18_000.0, ci95=1_115.6,
                      reach={2048: 0.5, 4096: 0.1, 8192: 0.0, 16384: 0.0, 32768: 0.0},
                      max_tiles={1024: 500, 2048: 400, 4096: 100}, mean_moves=1_800.0,
                      moves_per_second=25_000.0)
    text = format_summary(PlayerSpec("classic", {}, 1, 0.0001), summary, 12.3)
    lines = {line.split()[0]: line for line in text.splitlines()}
    assert lines["games"].split() == ["games", "1,000"]
    assert lines["mean"] == "mean score    33,820 +/- 1,116 (95% CI)"
    assert "cutoff 0.0001" in lines["player"] and "e-" not in text
    one = format_summary(PlayerSpec("classic", {}, 1, 0.0001),
                         dataclasses.replace(summary, games=1, stdev=0.0, ci95=0.0), 0.1)
    assert "mean score    33,820 (one game: no interval)" in one  # not "+/- 0": none exists
    alike = format_summary(PlayerSpec("classic", {}, 1, 0.0001),
                           dataclasses.replace(summary, games=5, stdev=0.0, ci95=0.0), 0.1)
    assert "mean score    33,820 (no spread in 5 games: no interval)" in alike
    assert lines["moves/second"].endswith("per process, 12 s wall")  # a duration as people say it
    assert "per process, 0.1 s wall" in one
    assert "per process, 1:02:05 wall" in format_summary(
        PlayerSpec("classic", {}, 1, 0.0001), summary, 3725.2)
