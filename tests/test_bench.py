"""The benchmarks still run: each is played at a toy size and must print its figures. What the
figures are is theirs to say, never a test's."""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.subprocess  # each benchmark runs as its script

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench(tmp_path: Path, script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_engine_speed_prints_its_figures(tmp_path):
    out = bench(tmp_path, "engine_speed.py", "--games", "1", "--seconds", "0.05")
    assert "decisions/s" in out and "start (import + first decision)" in out
    decisions = out.split("games from a fresh start")[0]
    rows = {line.split()[0]: line.split() for line in decisions.splitlines()
            if line.split()[:1] in (["1"], ["2"], ["3"])}
    evaluated = [float(rows[depth][3].replace(",", "")) for depth in ("1", "2", "3")]
    assert evaluated == sorted(evaluated) and evaluated[0] > 0  # moves a decision grow with depth


def test_suite_cpu_charges_a_tests_subprocesses_to_it(tmp_path):
    """A test that runs `tune` in a subprocess: its CPU time is charged to that test."""
    test = "tests/tuner/cli/test_main.py::test_checking_a_config_loads_neither_pycma_nor_numba"
    out = bench(tmp_path, "suite_cpu.py", "--top", "3", "--", "-q", "-n", "0", "-p",
                "no:randomly", test)
    assert "\n1 test in " in out and "CPU-seconds by kind of process:" in out  # after pytest's
    [charged] = [line for line in out.splitlines() if line.endswith(")") and test in line]
    assert float(charged.split()[0]) > 0.2  # a Python that imports the tuner: a few tenths
    assert "other processes (tune, python, tools)" in charged


def test_suite_cpu_counts_the_seconds_a_test_waits(tmp_path):
    """A test that sleeps: its wall time without CPU is listed as waiting."""
    (tmp_path / "test_sleeper.py").write_text("import time\n\n\ndef test_sleeps():\n"
                                              "    time.sleep(1.0)\n")
    out = bench(tmp_path, "suite_cpu.py", "--top", "3", "--", "-q", "-n", "0", "-p",
                "no:randomly", "-p", "no:cacheprovider", str(tmp_path / "test_sleeper.py"))
    waits = out.split("Seconds waiting (")[1].splitlines()
    [waited] = [line for line in waits if line.endswith("test_sleeper.py::test_sleeps")]
    assert 0.9 < float(waited.split()[0]) < 1.5


def test_engine_protocol_prints_the_ratio_of_the_protocol_to_the_engines_own_loop(tmp_path):
    out = bench(tmp_path, "engine_protocol.py", "--games", "2", "--search", "depth:1",
                "--repeat", "1")
    if shutil.which("cc") is None:
        assert out == "skipped: no C compiler (cc) to build examples/engines/c_engine.c\n"
    else:
        assert "2 games at depth:1" in out and "protocol / loop" in out


def test_the_comparison_with_nneonneo_skips_cleanly_without_its_source(tmp_path):
    assert bench(tmp_path, "nneonneo_speed.py") == (
        "skipped: no --source (a checkout of nneonneo/2048-ai)\n")
    out = bench(tmp_path, "nneonneo_speed.py", "--source", str(tmp_path))
    assert out == f"skipped: {tmp_path}: not a checkout of nneonneo/2048-ai (no 2048.cpp)\n"
    assert not (tmp_path / "nneonneo_auto.json").exists()


# A stand-in for nneonneo/2048-ai's source: the two functions the benchmark calls, its engine's
# habit of printing as it decides, and a move of its own (the board's two lowest bits)
FAKE_2048 = """#include <cstdint>
#include <cstdio>
extern "C" void init_tables() {}
extern "C" int find_best_move(uint64_t board) { std::printf("scoring\\n"); return board & 3; }
"""


def test_the_comparison_with_nneonneo_times_both_engines_on_the_same_boards(tmp_path):
    checkout = tmp_path / "2048-ai"
    checkout.mkdir()
    (checkout / "2048.cpp").write_text(FAKE_2048)
    out = bench(tmp_path, "nneonneo_speed.py", "--source", str(checkout), "--per-group", "1",
                "--out", str(tmp_path / "auto.json"))
    if shutil.which("g++") is None and shutil.which("c++") is None:
        assert out == "skipped: no C++ compiler (g++ or c++) on PATH\n"
        return
    assert "scoring" not in out  # its engine's printing kept off the report
    groups = [line.split() for line in out.splitlines() if line.split()[:1] in (
        ["3-6"], ["7-8"], ["9-9"], ["10-10"], ["all"])]
    assert [group[1] for group in groups] == ["1", "1", "1", "1", "4"]  # boards per group
    held = json.loads((tmp_path / "auto.json").read_text())
    assert held["engine"].startswith("sha256:") and len(held["rows"]) == 4
    for row in held["rows"]:
        assert row["theirs_move"] == int(row["board"], 16) & 3
        assert row["3"]["depth"] == 3 and row["auto"]["depth"] == max(3, row["distinct_tiles"] - 2)


def test_tuner_throughput_prints_a_row_per_worker_count(tmp_path):
    out = bench(tmp_path, "tuner_throughput.py", "--workers", "1", "--depth", "0",
                "--popsize", "4", "--generations", "2", "--games-per-task", "2",
                "--adaptive", "2", "6")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["1"]]
    assert len(rows) == 1 and rows[0][3].endswith("%") and rows[0][-1].endswith("%")


def test_price_sets_the_estimate_beside_the_recorded_wall_time(tmp_path):
    out = bench(tmp_path, "price_fit.py", "--runs", "classic-d1", "classic-d3",
                "--measure-seconds", "0")
    rows = [line.split() for line in out.splitlines()[1:-1]]
    sets = {(row[0], next(word for word in row if word.endswith(":"))) for row in rows}
    assert sets == {("classic-d1", "measured:"), ("classic-d1", "recorded:"),
                    ("classic-d3", "recorded:")}
    assert "measured now: 1 game" in out.splitlines()[2]
    assert "game_times.json (classic-d3)" in out.splitlines()[3]
    assert re.fullmatch(r"within 25%: measured [01] of 1 \(their positions a game [01] of 1\), "
                        r"recorded [0-2] of 2", out.splitlines()[-1])


def test_price_records_a_finished_run_and_prices_it(tmp_path):
    """``--record``: the run's config, CPUs, sittings and their wall time from its log (a
    sitting starts at its "run NAME:" line; a message's second line is no time), its start
    measured here; then the run is priced beside that wall time."""
    from tuner.analysis import price
    from tuner.config import parse_config, stored_text

    run_dir = tmp_path / "tiny"
    run_dir.mkdir()
    document = {"run": {"name": "tiny", "seed": 7}, "family": "classic",
                "params": {"merges_weight": {"init": 100, "low": 10, "high": 10000},
                           "empty_weight": {"init": 50, "low": 10, "high": 10000}},
                "search": {"depth": 0}, "evaluation": {"games": 8},
                "cmaes": {"popsize": 4, "max_generations": 3},
                "validation": {"games": 10, "top_k": 2}}
    config = parse_config(document, "tiny.yaml")
    (run_dir / "config.yaml").write_text(stored_text(config.resolved()))
    (run_dir / "cluster.csv").write_text("generation,cpus,seconds,game_seconds,share\n"
                                         "1,2,5,8.0,0.8\n2,2,5,4.0,0.4\n3,2,5,4.0,0.4\n")
    (run_dir / "history.csv").write_text("generation,evaluations,games,positions\n"
                                         "1,4,32,3200\n2,8,64,3200\n3,12,96,3200\n")
    (run_dir / "validation.csv").write_text("candidate,generation,fitness\nelite 1,3,1\n"
                                            "elite 2,2,1\nmean,3,1\nstart,0,1\n")
    (run_dir / "run.log").write_text(
        "2026-11-27 04:46:02,000 run tiny: family classic, depth 0\n"
        "2026-11-27 04:46:12,500 gen 1 of 3\n"
        "2026-11-27 04:46:20,000 interrupted after generation 1 (checkpointed); resume with:\n"
        "  tune resume outputs/tiny\n"
        "2026-11-27 05:00:00,000 run tiny: family classic, depth 0\n"
        "2026-11-27 05:00:30,000 done: reached max_generations (3)\n")
    data = tmp_path / "runs.json"
    bench(tmp_path, "price_fit.py", "--record", str(run_dir), "--data", str(data),
          "--measure-seconds", "0")
    [(name, held)] = json.loads(data.read_text())["runs"].items()
    assert name == "tiny" and held["config"] == config.resolved()
    assert (held["cpus"], held["sittings"], held["wall_seconds"]) == (2, 2, 48.0)
    assert (held["generations"], held["training_games"], held["game_seconds"]) == (3, 96, 16.0)
    assert held["start_game_seconds"] > 0 and held["start_games"] >= 1
    assert held["positions"] == 9600 and held["start_positions"] > 0
    assert held["validated_start"]  # a run before 0.4 did not: its price leaves the start out
    out = bench(tmp_path, "price_fit.py", "--data", str(data), "--runs", "tiny")
    [line] = out.splitlines()[1:-1]
    row = line.split()
    # validated: the 2 elites, the mean and the start
    assert row[:3] == ["tiny", "2", f"{3 * 4 * 8 + 4 * 10}"] and " 48 s " in line
    ratio = float(row[row.index("measured:") - 2])  # two starts of 15 s, games of no time
    assert ratio == pytest.approx(2 * 15 / 48, abs=0.02)
    # the estimate's positions a game over the run's (100 a game)
    positions = held["start_positions"] * price.positions_over_start(0) / 100
    assert float(row[row.index("measured:") - 1]) == pytest.approx(positions, abs=0.005)
    # --repeat: the start timed again, twice, and the run priced with each
    out = bench(tmp_path, "price_fit.py", "--data", str(data), "--runs", "tiny", "--repeat",
                "2", "--measure-seconds", "0")
    [_, line, spread] = out.splitlines()
    recorded = price.seconds_text(held["start_game_seconds"])
    assert line.split()[0] == "tiny" and f" {recorded} " in line
    ratios = [float(found) for found in re.findall(r"\((\d+\.\d+)\)", line)]
    assert ratios == [pytest.approx(2 * 15 / 48, abs=0.02)] * 2
    assert spread.startswith("slowest over fastest start, run by run: ")


def test_price_refuses_to_record_what_is_not_a_run_that_played(tmp_path):
    (tmp_path / "empty").mkdir()
    done = subprocess.run([sys.executable, str(BENCH / "price_fit.py"), "--record",
                           str(tmp_path / "empty"), "--data", str(tmp_path / "runs.json")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"bench/price_fit.py: error: {tmp_path / 'empty'}: not a run")
    assert not (tmp_path / "runs.json").exists()


def test_price_campaign_runs_each_config_between_two_timings_and_goes_on(tmp_path):
    """``--campaign``: a config run in full, its start timed before and after; run again, what
    it holds is kept and nothing is played again."""
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump({
        "run": {"name": "tiny", "seed": 7, "output_dir": "elsewhere"}, "family": "classic",
        "params": {"merges_weight": {"init": 100, "low": 10, "high": 10000},
                   "empty_weight": {"init": 50, "low": 10, "high": 10000}},
        "search": {"depth": 0}, "evaluation": {"games": 8},
        "cmaes": {"popsize": 4, "max_generations": 2}, "validation": {"games": 10, "top_k": 1}}))
    args = ["--campaign", str(config), "--dir", str(tmp_path / "campaign"),
            "--measure-seconds", "0"]
    bench(tmp_path, "price_fit.py", *args)  # a run this small plays in its own process: no Ray
    data = tmp_path / "campaign" / "price_runs.json"
    [(name, held)] = json.loads(data.read_text())["runs"].items()
    assert name == "tiny" and held["training_games"] == 2 * 4 * 8
    assert held["start_before_seconds"] > 0 and held["start_after_seconds"] > 0
    assert held["start_game_seconds"] == pytest.approx(
        (held["start_before_seconds"] + held["start_after_seconds"]) / 2, abs=1e-6)
    history = tmp_path / "campaign" / "tiny" / "history.csv"
    assert held["positions"] == sum(int(row["positions"]) for row in
                                    csv.DictReader(history.open()))
    before = history.stat().st_mtime_ns, data.read_text()
    bench(tmp_path, "price_fit.py", *args)
    assert (history.stat().st_mtime_ns, data.read_text()) == before
    assert not (tmp_path / "elsewhere").exists()


def test_cluster_scale_prints_both_dispatches_and_writes_its_json(tmp_path):
    out = bench(tmp_path, "cluster_scale.py", "--configs", "snake", "--cpus", "2", "16",
                "--generations", "2", "--json", str(tmp_path / "shares.json"))
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["2"], ["16"])]
    assert len(rows) == 2 and all(row[2].endswith("%") and row[5].endswith("%") for row in rows)
    shares = json.loads((tmp_path / "shares.json").read_text())
    assert set(shares) == {"snake"} and set(shares["snake"]) == {"2", "16"}
    assert all(0 < share <= 1 for share in shares["snake"].values())


def test_the_game_times_recorded_are_what_the_replay_replays(tmp_path):
    """Record a config's first generation and Ray's costs at a toy size, then replay them."""
    data = tmp_path / "times.json"
    bench(tmp_path, "record_game_times.py", "--configs", "quick", "--games", "2",
          "--tasks", "20", "--ray-cpus", "1", "--out", str(data))
    record = json.loads(data.read_text())
    [candidates] = [entry["candidates"] for entry in record["configs"].values()]
    assert len(candidates) == 6 and all(len(games) == 2 for games in candidates)  # popsize 6
    assert all(score > 0 and seconds > 0 for games in candidates for score, seconds, _ in games)
    assert record["ray"]["cpus"] == 1 and record["ray"]["worker_task_s"] > 0
    out = bench(tmp_path, "cluster_scale.py", "--data", str(data), "--configs", "quick",
                "--cpus", "2", "--generations", "2")
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["2"]]
    assert len(rows) == 1 and rows[0][2].endswith("%")


def test_sequential_error_rates_replays_the_test_on_saved_games(tmp_path):
    out = bench(tmp_path, "sequential_error_rates.py", "--sources", "auto5-100", "--replays",
                "200", "--points", "0", "0.5", "1", "--check", "5")
    rows = [line.split() for line in out.splitlines() if line.startswith("auto5-100 ")]
    assert [row[5] for row in rows[:3]] == ["0", "0.5", "1"]
    found = [float(row[6].rstrip("%")) for row in rows[:3]]
    assert found[0] < found[1] < found[2]  # a gain is found more often as the truth rises
    assert len(rows) == 4 and {rows[3][2], rows[3][4]} <= {"ok", "OVER"}  # the error rates
    assert out.rstrip().endswith(" s") and "5 replays a point, 0 differ" in out
