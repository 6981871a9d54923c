"""`tune compare`: paired statistics, and the command on real weights files."""

from __future__ import annotations

import json
import math
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXIT_RAY_GUARD, run_tune

from engine import Solver, read_weights
from engine.rules import RULES
from engine.weights_file import WeightsFile, write_weights
from tuner import installed
from tuner.analysis.compare import labels_for, paired_difference
from tuner.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
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


@pytest.mark.subprocess
def test_compare_plays_every_file_on_the_same_seeds(tmp_path):
    files = [WEIGHTS / "classic-reference.yaml", WEIGHTS / "seed002-snake.yaml"]
    done = run_tune(["compare", *map(str, files), "--depth", "0", "--games", "30", "--seed",
                     "500", "--workers", "2", "--json"], tmp_path, None)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    classic, snake = report["players"]
    expected = [Solver.from_file(files[0], depth=0).play(seed).score for seed in range(500, 530)]
    assert classic["games"] == 30 and classic["mean"] == pytest.approx(sum(expected) / 30)
    assert snake["family"] == "snake" and snake["depth"] == 0
    [pair] = report["pairs"]
    assert pair["mean_difference"] == pytest.approx(classic["mean"] - snake["mean"])
    assert 0.0 <= pair["p_value"] <= 1.0


def test_a_comparison_too_small_for_ray_plays_here_and_says_how_to_play_it_on_ray(
        tmp_path, no_ray):
    """Without --workers, 2 x 50 depth-1 games (well under Ray's start) play in this process
    (the stand-in for Ray exits if imported); the command the line gives goes to Ray."""
    files = [str(WEIGHTS / "classic-reference.yaml"), str(WEIGHTS / "seed002-snake.yaml")]
    done = run_tune(["compare", *files, "--depth", "1", "--games", "50"], tmp_path, no_ray)
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stderr.splitlines() if line.startswith("games in ")]
    prefix = "games in this process: fewer than starting Ray would pay for; on Ray: "
    assert line.startswith(prefix)
    argv = shlex.split(line.removeprefix(prefix))
    assert argv == ["tune", "compare", *files, "--depth", "1", "--games", "50", "--workers",
                    str(max(os.cpu_count(), 2))]
    on_ray = run_tune(argv[1:], tmp_path, no_ray)
    assert on_ray.returncode == EXIT_RAY_GUARD, on_ray.stderr
    quiet = run_tune(["compare", *files, "--depth", "1", "--games", "50", "--quiet"], tmp_path,
                     no_ray)
    assert quiet.returncode == 0 and quiet.stdout == done.stdout and quiet.stderr == ""


@pytest.mark.parametrize("args", [["--depth", "2", "--games", "120"],  # about 17 CPU-s
                                  ["--depth", "1", "--games", "50", "--workers", "2"]])
def test_a_comparison_that_ray_shortens_or_that_asks_for_workers_goes_to_ray(
        tmp_path, no_ray, args):
    files = [str(WEIGHTS / "classic-reference.yaml"), str(WEIGHTS / "seed002-snake.yaml")]
    done = run_tune(["compare", *files, *args], tmp_path, no_ray)
    assert done.returncode == EXIT_RAY_GUARD, done.stderr


def test_compare_at_a_depth_policy_records_it(tmp_path, no_ray):
    """On one local worker, in this process: Ray (the stand-in that exits) is never started."""
    files = [WEIGHTS / "classic-reference.yaml", WEIGHTS / "seed002-snake.yaml"]
    done = run_tune(["compare", *map(str, files), "--depth", "nodes:2000", "--games", "30",
                     "--workers", "1", "--json"], tmp_path, no_ray)
    assert done.returncode == 0, done.stderr
    classic, snake = json.loads(done.stdout)["players"]
    assert classic["depth"] == snake["depth"] == "nodes:2000"
    solver = Solver.from_file(files[0], depth="nodes:2000")
    expected = [solver.play(seed).score for seed in range(10**9, 10**9 + 30)]
    assert classic["mean"] == pytest.approx(sum(expected) / 30)


@pytest.mark.subprocess
def test_compare_refuses_too_few_games_for_a_paired_test():
    done = subprocess.run(
        [sys.executable, "-m", "tuner", "compare", str(WEIGHTS / "classic-reference.yaml"),
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
        (["--workers", "0"], "--workers: expected an integer from 1 to 4096, got 0"),
        (["--address", "localhost"], "--address: expected 'auto', HOST:PORT or local, got 'localhost'"),
        (["--depth", "9"], "--depth: expected an integer from 0 to 8, got 9"),
        (["--save", ""], "--save needs a file name"),
    ],
)
def test_bad_arguments_are_refused_before_ray_starts(args, expected, capsys, monkeypatch):
    import tuner.cluster.ray_evaluator

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_ray)
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
    from tuner.analysis.compare import format_report

    player = {"name": "tuned", "depth": 3, "games": 1000, "mean": 151_315.4, "ci95": 4_332.1,
              "median": 150_020.0, "reach": {"2048": 0.996, "4096": 0.95, "8192": 0.723,
                                             "16384": 0.1, "32768": 0.0}, "mean_moves": 7_321.0}
    pair = {"a": "tuned", "b": "reference", "mean_difference": 19_610.2, "ci95": 3_120.4,
            "p_value": 3e-12}
    text = format_report({"players": [player], "pairs": [pair]})
    assert text.splitlines()[0] == ("scores on the same seeds; +/- is the half-width of a 95% "
                                    "confidence interval")
    assert text.splitlines()[2].split()[:6] == ["tuned", "3", "1,000", "151,315", "4,332",
                                                "150,020"]
    assert text.splitlines()[-1] == "tuned - reference: +19,610 +/- 3,120   p < 0.0001"
    assert "e-" not in text and "e+" not in text


def test_a_player_compared_with_its_copy_has_no_interval_to_show():
    """Paired differences that are all 0 (a file and its copy) have no spread: no "+/- 0"."""
    from tuner.analysis.compare import format_report, paired_difference

    player = {"name": "a", "depth": 1, "games": 30, "mean": 5_000.0, "ci95": 0.0,
              "median": 5_000.0, "reach": {str(t): 0.0 for t in (2048, 4096, 8192, 16384, 32768)},
              "mean_moves": 400.0}
    pair = {"a": "a", "b": "b", **paired_difference([5_000.0] * 30, [5_000.0] * 30)}
    lines = format_report({"players": [player, {**player, "name": "b"}], "pairs": [pair]})
    lines = lines.splitlines()
    assert lines[-1] == "a - b: +0 (no spread in 30 games: no interval)   p = 1"
    assert lines[2].split()[:6] == ["a", "1", "30", "5,000", "-", "5,000"]


def test_the_report_columns_line_up_under_a_depth_policy_longer_than_its_heading():
    from tuner.analysis.compare import format_report

    reach = {str(t): 0.5 for t in (2048, 4096, 8192, 16384, 32768)}
    players = [{"name": name, "depth": "auto:cap=5", "games": 32, "mean": 263_828.0,
                "ci95": 38_067.0, "median": 280_416.0, "reach": reach, "mean_moves": 10_229.0}
               for name in ("best", "classic-reference")]
    head, *rows = format_report({"players": players, "pairs": []}).splitlines()[1:4]
    for row in rows:  # right-aligned columns: each value ends where its heading ends
        assert len(row) == len(head)
        assert row.index("auto:cap=5") + len("auto:cap=5") == head.index("depth") + len("depth")
        assert row.index(" 32 ") + len(" 32") == head.index("games") + len("games")


# ---- --save: a comparison kept game by game, and gone on with ----------------------------------

def compare(*args: str, driver: str = "") -> subprocess.CompletedProcess:
    code = driver + "import sys; from tuner.cli.main import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", code, "compare", *args], capture_output=True,
                          text=True, timeout=600, check=False)


PAIR = [str(WEIGHTS / "classic-reference.yaml"), str(WEIGHTS / "seed002-snake.yaml")]

# Ctrl-C as the first unit's games are kept: the comparison stops there.
CTRL_C_AFTER_THE_FIRST_UNIT = """
import os, signal
from tuner.games import saved_games
real_add = saved_games.SavedGames.add
def add(self, player, results):
    real_add(self, player, results)
    os.kill(os.getpid(), signal.SIGINT)
saved_games.SavedGames.add = add
signal.signal(signal.SIGINT, signal.default_int_handler)
"""


@pytest.mark.subprocess
def test_a_saved_comparison_stopped_by_ctrl_c_goes_on_to_the_same_report(tmp_path):
    save = tmp_path / "games.json"
    args = [*PAIR, "--depth", "1", "--games", "40", "--workers", "1", "--json", "--save",
            str(save)]
    stopped = compare(*args, driver=CTRL_C_AFTER_THE_FIRST_UNIT)
    assert stopped.returncode == 130, stopped.stderr
    kept = sum(map(len, json.loads(save.read_text())["games"]))
    assert 0 < kept < 80
    assert stopped.stderr.endswith(
        f" of 80 games are kept in {save}; go on with:\n  tune compare {PAIR[0]} {PAIR[1]} "
        f"--depth 1 --games 40 --workers 1 --json --save {save}\ntune: interrupted\n")
    assert f"{kept} of 80 games" in stopped.stderr and "Traceback" not in stopped.stderr
    went_on = compare(*args)
    assert went_on.returncode == 0, went_on.stderr
    report = json.loads(went_on.stdout)
    seeds = range(10**9, 10**9 + 40)
    means = [sum(Solver.from_file(path, depth=1).play(seed).score for seed in seeds) / 40
             for path in PAIR]
    assert [p["mean"] for p in report["players"]] == pytest.approx(means)
    assert report["pairs"][0]["mean_difference"] == pytest.approx(means[0] - means[1])
    assert [len(games) for games in json.loads(save.read_text())["games"]] == [40, 40]


@pytest.mark.subprocess
def test_the_games_a_save_holds_are_not_played_again(tmp_path, monkeypatch, capsys):
    save = tmp_path / "games.json"
    done = compare(*PAIR, "--depth", "0", "--games", "30", "--seed", "7", "--workers", "1",
                   "--save", str(save))
    assert done.returncode == 0, done.stderr
    held = json.loads(save.read_text())
    assert held["format"] == "tune2048-compare-games" and held["version"] == 2
    assert held["tune2048"] == installed.version() and held["rules"] == RULES
    assert [p["depth"] for p in held["players"]] == [0, 0]
    assert [g["seed"] for g in held["games"][0]] == list(range(7, 37))
    held["games"][0][0]["score"] += 30_000_000  # a kept game counts as it is kept
    save.write_text(json.dumps(held))

    import tuner.cluster.ray_evaluator

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_ray)
    assert main(["compare", *PAIR, "--depth", "0", "--games", "30", "--seed", "7", "--json",
                 "--save", str(save)]) == 0
    out, err = capsys.readouterr()
    assert err.endswith(f"{save}: 60 of 60 games reused from it, 0 played now and added\n")
    classic, _snake = json.loads(out)["players"]
    scores = [Solver.from_file(PAIR[0], depth=0).play(seed).score for seed in range(7, 37)]
    assert classic["mean"] == pytest.approx((sum(scores) + 30_000_000) / 30)


def test_a_save_is_written_at_once_then_at_most_every_write_interval(tmp_path, monkeypatch):
    from engine.solver import PlayerSpec
    from tuner import periodic
    from tuner.games import saved_games

    clock = [1000.0]
    monkeypatch.setattr(periodic.time, "monotonic", lambda: clock[0])
    spec = PlayerSpec("classic", read_weights(WEIGHTS / "classic-reference.yaml").weights, 0)
    solver = Solver(spec.family, spec.weights, depth=0)
    games = [solver.play(seed) for seed in range(6)]
    save = tmp_path / "games.json"
    saved = saved_games.SavedGames(save, [spec])

    def written() -> int:
        return len(json.loads(save.read_text())["games"][0])

    saved.add(0, games[:2])
    assert written() == 2  # the first unit at once
    clock[0] += periodic.WRITE_EVERY_SECONDS - 1
    saved.add(0, games[2:4])
    assert written() == 2  # not yet: the file would be rewritten for every small unit
    clock[0] += 1
    saved.add(0, games[4:5])
    assert written() == 5
    saved.add(0, games[5:])
    saved.flush()
    assert written() == 6
    before = save.stat().st_mtime_ns
    saved.flush()  # nothing new: nothing written
    assert save.stat().st_mtime_ns == before


def test_a_save_holds_games_by_player_so_a_new_player_is_judged_against_kept_games(tmp_path):
    from engine.solver import PlayerSpec
    from tuner.games.saved_games import SavedGames, player

    snake, classic, features = (
        PlayerSpec(w.family, w.weights, 0, 0.0001) for w in
        (read_weights(WEIGHTS / f"{name}.yaml")
         for name in ("seed002-snake", "classic-reference", "seed002-features")))
    seeds = range(7, 37)

    def games(player: PlayerSpec) -> list:
        solver = Solver(player.family, player.weights, depth=0)
        return [solver.play(seed) for seed in seeds]

    def scores(results: list) -> list:
        return [(game.seed, game.score, game.final_board) for game in results]

    save = tmp_path / "games.json"
    first = SavedGames(save, [snake, classic])
    first.add(0, games(snake))
    first.add(1, games(classic))
    first.flush()
    # A comparison naming classic again, beside a player new to the file, in another order.
    second = SavedGames(save, [features, classic])
    assert second.missing(1, seeds) == () and second.missing(0, seeds) == tuple(seeds)
    assert second.count(seeds) == 30
    second.add(0, games(features))
    second.flush()
    held = json.loads(save.read_text())
    assert held["players"] == [player(each) for each in (snake, classic, features)]
    assert [len(kept) for kept in held["games"]] == [30, 30, 30]  # snake's games kept as they were
    assert scores(second.results(0, seeds)) == scores(games(features))
    third = SavedGames(save, [classic, snake])
    assert scores(third.results(1, seeds)) == scores(games(snake))
    assert third.count(seeds) == 60


@pytest.mark.subprocess
def test_a_comparison_in_another_order_reuses_every_kept_game(tmp_path, monkeypatch, capsys):
    save = tmp_path / "games.json"
    done = compare(*PAIR, "--depth", "0", "--games", "30", "--seed", "7", "--workers", "1",
                   "--json", "--save", str(save))
    assert done.returncode == 0, done.stderr
    forward = json.loads(done.stdout)

    import tuner.cluster.ray_evaluator

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_ray)
    assert main(["compare", PAIR[1], PAIR[0], "--depth", "0", "--games", "30", "--seed", "7",
                 "--json", "--save", str(save)]) == 0
    backward = json.loads(capsys.readouterr().out)
    assert [p["mean"] for p in backward["players"]] == [
        p["mean"] for p in reversed(forward["players"])]
    assert backward["pairs"][0]["mean_difference"] == pytest.approx(
        -forward["pairs"][0]["mean_difference"])


COUNT_GAMES_KEPT = """
import sys
from tuner.games import saved_games
real_add = saved_games.SavedGames.add
def add(self, player, results):
    real_add(self, player, results)
    print(f"kept {len(results)}", file=sys.stderr)
saved_games.SavedGames.add = add
"""


@pytest.mark.subprocess
def test_a_player_named_twice_plays_its_games_once(tmp_path):
    copy = tmp_path / "copy.yaml"
    copy.write_text(Path(PAIR[0]).read_text())
    save = tmp_path / "games.json"
    done = compare(PAIR[0], str(copy), "--depth", "0", "--games", "30", "--workers", "1",
                   "--json", "--save", str(save), driver=COUNT_GAMES_KEPT)
    assert done.returncode == 0, done.stderr
    kept = [int(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("kept ")]
    assert sum(kept) == 30
    first, second = json.loads(done.stdout)["players"]
    assert first["mean"] == second["mean"]
    assert [len(games) for games in json.loads(save.read_text())["games"]] == [30]


THIS_VERSION = ('{"format": "tune2048-compare-games", "version": 2, "tune2048": "0.4.0", '
                '"rules": "{rules}", ')


@pytest.mark.parametrize(
    ("held", "expected"),
    [
        ("not json", "not a file of tune compare's games"),
        ('{"format": "tune2048-weights"}', "not a file of tune compare's games"),
        ('{"format": "tune2048-compare-games", "version": 9, "tune2048": "9.0.0"}',
         "games file version 9, written by tune2048 9.0.0; this tune2048 reads versions 1 and 2"),
        ('{"format": "tune2048-compare-games", "version": true}', "games file version True"),
        ('{"format": "tune2048-compare-games", "version": 2, "rules": "2048 5x5"}',
         "holds games played by other rules ('2048 5x5'; this tune2048 plays"),
        ('{"format": "tune2048-compare-games", "version": 2}',
         "holds games played by other rules (None; this tune2048 plays"),
        (THIS_VERSION + '"players": {}}', "its players are not as tune compare writes them"),
        (THIS_VERSION + '"players": [{"family": "classic"}], "games": [[]]}',
         "its players are not as tune compare writes them"),
        (THIS_VERSION + '"players": {players}, "games": [[{"seed": 1}]]}',
         "its games are not as tune compare writes them"),
        (THIS_VERSION + '"players": {players}, "games": [[], []]}',
         "its games are not as tune compare writes them"),
        (THIS_VERSION + '"players": {players}, "games": [[' + json.dumps(
            {"seed": "5", "score": 1, "max_tile": 2, "moves": 1, "seconds": 0.1,
             "moves_evaluated": 4, "final_board": 1}) + ']]}',
         "its games are not as tune compare writes them"),
    ],
)
def test_a_save_file_of_anything_else_is_refused_and_left_as_it_was(tmp_path, monkeypatch, capsys,
                                                                     held, expected):
    import tuner.cluster.ray_evaluator
    from engine.solver import PlayerSpec
    from tuner.games.saved_games import player

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_ray)
    players = [player(PlayerSpec("classic", read_weights(PAIR[0]).weights, 1, 0.0001))]
    save = tmp_path / "games.json"
    text = held.replace("{rules}", RULES).replace("{players}", json.dumps(players))
    save.write_text(text)
    assert main(["compare", PAIR[0], PAIR[0], "--depth", "1", "--save", str(save)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tune: error: {save}: ") and expected in line, line
    assert save.read_text() == text
    assert [p.name for p in tmp_path.iterdir()] == ["games.json"]


# The games files shipped with the project's results, written by tune2048 0.3 (version 1).
SHIPPED_GAMES = sorted(ROOT.glob("runs/**/*.games.json"))


@pytest.mark.parametrize("shipped", SHIPPED_GAMES, ids=lambda path: path.name)
def test_every_shipped_games_file_is_read_with_every_game_it_holds(shipped):
    from tuner.games.saved_games import SavedGames

    held = json.loads(shipped.read_text())
    saved = SavedGames(shipped, [])
    assert saved.players == held["players"]
    assert [sorted(games) for games in saved.games] == [
        sorted(game["seed"] for game in games) for games in held["games"]]


def test_a_games_file_of_an_earlier_version_goes_on_with_the_same_games(tmp_path, capsys):
    """A copy of a shipped file, less one seed of every player: the comparison of its players
    reuses every game it holds and plays the seed again, the very games the file had, then
    writes the file as this version does."""
    [shipped] = [path for path in SHIPPED_GAMES if path.name == "strategies-d3-1000.games.json"]
    held = json.loads(shipped.read_text())
    assert held["version"] == 1 and "rules" not in held
    seed = 10**9 + 343  # the cheapest of the file's seeds: about 1.3 s for its three games
    removed = [next(game for game in games if game["seed"] == seed) for games in held["games"]]
    held["games"] = [[game for game in games if game["seed"] != seed] for games in held["games"]]
    copy = tmp_path / shipped.name
    copy.write_text(json.dumps(held), encoding="utf-8")
    files = []
    for i, each in enumerate(held["players"]):
        files.append(str(tmp_path / f"player-{i}.yaml"))
        write_weights(files[-1], WeightsFile(each["family"], each["weights"], each["depth"]))
    assert main(["compare", *files, "--depth", "3", "--games", "1000", "--workers", "1",
                 "--json", "--save", str(copy)]) == 0
    assert capsys.readouterr().err.endswith(
        f"{copy}: 2,997 of 3,000 games reused from it, 3 played now and added\n")
    now = json.loads(copy.read_text())
    assert (now["version"], now["rules"], now["tune2048"]) == (2, RULES, installed.version())
    assert now["players"] == held["players"]

    def decided(game: dict) -> dict:
        return {key: value for key, value in game.items() if key != "seconds"}

    assert [decided(game) for games in now["games"] for game in games if game["seed"] == seed] \
        == [decided(game) for game in removed]


def test_a_save_path_that_cannot_be_written_is_refused_before_ray_starts(tmp_path, monkeypatch,
                                                                         capsys):
    import tuner.cluster.ray_evaluator

    def no_ray(*args, **kwargs):
        raise AssertionError("Ray started")

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "RayEvaluator", no_ray)
    assert main(["compare", PAIR[0], PAIR[0], "--save", str(tmp_path)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tune: error: {tmp_path}")


def test_a_sequential_report_says_the_verdict_why_and_what_a_fixed_test_needs():
    from tuner.analysis.compare import sequential_lines, sequential_report
    from tuner.analysis.sequential import Margin, SequentialTest

    test = SequentialTest(Margin(5.0, percent=True), Margin(0.0, percent=True))
    same = [(score, score) for score in range(10_000, 10_000 + 40 * 997, 997)]
    verdict = test.run(same, most=40)  # no difference at all: no gain, at the least pairs
    report = sequential_report(test, verdict, ["tuned", "reference"], 40, 12, 3)
    assert (report["verdict"], report["pairs"], report["most_pairs"]) == ("no gain", 30, 40)
    assert report["beyond"] == {"finished": 12, "in_flight": 3}
    assert report["llr"] <= report["lower"] and report["fixed_pairs"] == 1
    lines = sequential_lines(report)
    assert lines[0] == ("sequential test (GSPRT, alpha 0.05, beta 0.05) of tuned over "
                        "reference: no gain 0% (+0 points), gain 5% (+1,223 points)")  # of the 30 pairs
    assert lines[1].startswith("H0 accepted: tuned gains at most 0% (+0 points) over reference "
                               "(LLR -") and lines[1].endswith(" after 30 pairs <= -3)")
    assert lines[2] == ("pairs spent: 30 of at most 40; a fixed test of the same error rates: "
                        "1 pair (at the differences' sd, 0)")
    assert lines[3] == ("not counted, beyond the decided pairs: 12 games finished, 3 in flight "
                        "when it decided")
