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

BENCH = Path(__file__).resolve().parents[1] / "bench"


def bench(tmp_path: Path, script: str, *args: str) -> str:
    done = subprocess.run([sys.executable, str(BENCH / script), *args], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_engine_speed_prints_its_figures(tmp_path):
    out = bench(tmp_path, "engine_speed.py", "--games", "1", "--seconds", "0.05")
    assert "decisions/s" in out and "start (import + first decision)" in out


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


def test_the_validity_of_position_objectives_prints_its_figures_and_goes_on_where_it_stopped(
        tmp_path):
    toy = ["--games", "4", "--set-games", "2", "--local", "2", "--spread", "2",
           "--oracle-depths", "1", "--workers", "1", "--out", str(tmp_path / "out")]
    out = bench(tmp_path, "positions_validity.py", *toy)
    assert "4 candidates (2 local), 4 games each at depth 1; split-half Spearman" in out
    assert [line.split()[1] for line in out.splitlines()[2:]] == [
        "regret", "agreement", "outcome_fit"]
    kept = {path.name: path.read_bytes() for path in (tmp_path / "out" / "games").iterdir()}
    assert len(kept) == 4
    assert bench(tmp_path, "positions_validity.py", *toy) == out  # nothing played again
    assert kept == {path.name: path.read_bytes() for path in (tmp_path / "out" / "games").iterdir()}


def test_positions_cost_prices_a_set_against_64_games_and_goes_on_where_it_was(tmp_path):
    args = ["--games", "1", "--policies", "1=2", "2=2", "--every", "20", "--set-size", "1000",
            "--jobs", "1", "--out", str(tmp_path / "cost.json")]
    out = bench(tmp_path, "positions_cost.py", *args)
    rows = {line.split()[0]: line.split() for line in out.splitlines()[3:]}
    assert sorted(rows) == ["1", "2"]
    game = json.loads((tmp_path / "cost.json").read_text())["games"]["2=2"]["1"]
    # at its own policy, the candidate's search of a position is the oracle's: the same count
    assert game["regret_positions"] == game["agreement_positions"] == game["oracle_positions"]
    assert game["outcome_fit_positions"] == game["taken"]  # one heuristic call a position
    assert float(rows["2"][4]) > float(rows["1"][4])  # a depth-2 game evaluates more positions
    assert bench(tmp_path, "positions_cost.py", *args) == out.split("\n", 1)[1]  # none again


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


def test_the_games_in_nneonneos_engine_skip_cleanly_without_its_source(tmp_path):
    assert bench(tmp_path, "nneonneo_games.py", "classic-reference") == (
        "skipped: no --source (a checkout of nneonneo/2048-ai)\n")
    out = bench(tmp_path, "nneonneo_games.py", "classic-reference", "--source", str(tmp_path),
                "--out", str(tmp_path / "games.json"))
    assert out == f"skipped: {tmp_path}: not a checkout of nneonneo/2048-ai (no 2048.cpp)\n"
    assert not (tmp_path / "games.json").exists()


# The lines of nneonneo/2048-ai's 2048.cpp that its build replaces, as they stand there
THEIR_LINES = """#include "2048.h"
static const float SCORE_LOST_PENALTY = 200000.0f;
static const float SCORE_MONOTONICITY_POWER = 4.0f;
static const float SCORE_MONOTONICITY_WEIGHT = 47.0f;
static const float SCORE_SUM_POWER = 3.5f;
static const float SCORE_SUM_WEIGHT = 11.0f;
static const float SCORE_MERGES_WEIGHT = 700.0f;
static const float SCORE_EMPTY_WEIGHT = 270.0f;

void init_tables() {}
    state.depth_limit = std::max(3, count_distinct_tiles(board) - 2);
"""


@pytest.fixture
def nneonneo_build():
    sys.path.insert(0, str(BENCH))
    try:
        import nneonneo

        yield nneonneo
    finally:
        sys.path.remove(str(BENCH))


def test_a_weights_files_constants_and_a_depth_policy_replace_nneonneos_own(nneonneo_build):
    from engine.depth import parse_depth
    from engine.export import c_source
    from engine.weights_file import read_weights

    constants = c_source(read_weights(BENCH.parent / "runs" / "classic-d3" / "best.yaml"), "x")
    text = nneonneo_build.patched(THEIR_LINES, constants, parse_depth("auto:cap=6"))
    assert "static const float" not in text
    assert text.count("static const double SCORE_") == 7
    assert "SCORE_MONOTONICITY_POWER = 3.1067677683905495;" in text
    assert text.index("SCORE_LOST_PENALTY") < text.index("void init_tables")
    assert "state.depth_limit = std::min(6, std::max(3, count_distinct_tiles(board) - 2));" in text
    fixed = nneonneo_build.patched(THEIR_LINES, None, parse_depth("3"))
    assert "state.depth_limit = 3;" in fixed and "SCORE_SUM_POWER = 3.5f;" in fixed
    assert nneonneo_build.patched(THEIR_LINES) == THEIR_LINES
    with pytest.raises(ValueError, match="node budget"):
        nneonneo_build.patched(THEIR_LINES, None, parse_depth("nodes:200000"))
    with pytest.raises(ValueError, match="not the seven expected"):
        nneonneo_build.patched(THEIR_LINES.replace("SCORE_SUM_POWER", "SUM_POWER"), constants)


def test_the_docs_sed_lines_make_the_same_source_as_the_benchmarks_build(tmp_path, nneonneo_build):
    """docs/cli.md tells users to drop an export into nneonneo/2048-ai with sed: run them."""
    from engine.depth import parse_depth

    docs = (BENCH.parent / "docs" / "cli.md").read_text()
    drop_in = next(line for line in docs.splitlines() if line.startswith("sed -i -e"))
    fixed_depth = next(part.strip("`") for part in docs.split("`")
                       if part.startswith("sed -i 's/std::max"))
    source = tmp_path / "2048.cpp"
    source.write_text(THEIR_LINES)
    for command in (drop_in, fixed_depth):
        subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    text = source.read_text()
    assert "SCORE_" not in text and '#include "2048.h"\n#include "tuned.h"\n' in text
    assert nneonneo_build.patched(THEIR_LINES, None, parse_depth("3")).replace(
        "".join(line + "\n" for line in THEIR_LINES.splitlines() if "SCORE_" in line), "") == (
        text.replace('#include "tuned.h"\n', ""))


def test_nneonneo_games_go_on_from_any_checkout_of_the_same_engine(tmp_path, nneonneo_build):
    """The shipped games file was played from a checkout elsewhere: the engine is known by its
    files, so a user's checkout of the same source goes on with it, and another is refused."""
    import nneonneo_games

    here, there = tmp_path / "here", tmp_path / "there"
    for checkout in (here, there):
        checkout.mkdir()
        (checkout / "2048.cpp").write_text(THEIR_LINES)
        (checkout / "2048.h").write_text("// header\n")
    assert nneonneo_build.source_digest(here) == nneonneo_build.source_digest(there)
    settings = {"engine": nneonneo_build.source_digest(here), "depth": "3", "seed": 10**9,
                "weights": ["classic-reference"]}
    out = tmp_path / "games.json"
    games = {"classic-reference": {str(10**9): {"score": 1}}}
    out.write_text(json.dumps({"settings": settings, "games": games}))
    assert nneonneo_games.previous_games(out, {**settings, "engine": nneonneo_build.source_digest(
        there)}) == games
    (there / "2048.h").write_text("// another header\n")
    with pytest.raises(SystemExit, match=r"holds another comparison \(its engine is sha256:"):
        nneonneo_games.previous_games(out, {**settings, "engine": nneonneo_build.source_digest(
            there)})
    with pytest.raises(SystemExit, match="its depth is 3, not 4"):
        nneonneo_games.previous_games(out, {**settings, "depth": "4"})


def test_price_sets_the_estimate_beside_the_recorded_wall_time(tmp_path):
    out = bench(tmp_path, "price.py", "--runs", "classic-d1", "classic-d3",
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
    (run_dir / "run.log").write_text(
        "2026-11-27 04:46:02,000 run tiny: family classic, depth 0\n"
        "2026-11-27 04:46:12,500 gen 1 of 3\n"
        "2026-11-27 04:46:20,000 interrupted after generation 1 (checkpointed); resume with:\n"
        "  tune resume outputs/tiny\n"
        "2026-11-27 05:00:00,000 run tiny: family classic, depth 0\n"
        "2026-11-27 05:00:30,000 done: reached max_generations (3)\n")
    data = tmp_path / "runs.json"
    bench(tmp_path, "price.py", "--record", str(run_dir), "--data", str(data),
          "--measure-seconds", "0")
    [(name, held)] = json.loads(data.read_text())["runs"].items()
    assert name == "tiny" and held["config"] == config.resolved()
    assert (held["cpus"], held["sittings"], held["wall_seconds"]) == (2, 2, 48.0)
    assert (held["generations"], held["training_games"], held["game_seconds"]) == (3, 96, 16.0)
    assert held["start_game_seconds"] > 0 and held["start_games"] >= 1
    assert held["positions"] == 9600 and held["start_positions"] > 0
    out = bench(tmp_path, "price.py", "--data", str(data), "--runs", "tiny")
    [line] = out.splitlines()[1:-1]
    row = line.split()
    assert row[:3] == ["tiny", "2", f"{3 * 4 * 8 + 3 * 10}"] and " 48 s " in line
    ratio = float(row[row.index("measured:") - 2])  # two starts of 15 s, games of no time
    assert ratio == pytest.approx(2 * 15 / 48, abs=0.02)
    # the estimate's positions a game over the run's (100 a game)
    positions = held["start_positions"] * price.positions_over_start(0) / 100
    assert float(row[row.index("measured:") - 1]) == pytest.approx(positions, abs=0.005)
    # --repeat: the start timed again, twice, and the run priced with each
    out = bench(tmp_path, "price.py", "--data", str(data), "--runs", "tiny", "--repeat", "2",
                "--measure-seconds", "0")
    [_, line, spread] = out.splitlines()
    recorded = price.seconds_text(held["start_game_seconds"])
    assert line.split()[0] == "tiny" and f" {recorded} " in line
    ratios = [float(found) for found in re.findall(r"\((\d+\.\d+)\)", line)]
    assert ratios == [pytest.approx(2 * 15 / 48, abs=0.02)] * 2
    assert spread.startswith("slowest over fastest start, run by run: ")


def test_price_refuses_to_record_what_is_not_a_run_that_played(tmp_path):
    (tmp_path / "empty").mkdir()
    done = subprocess.run([sys.executable, str(BENCH / "price.py"), "--record",
                           str(tmp_path / "empty"), "--data", str(tmp_path / "runs.json")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"bench/price.py: error: {tmp_path / 'empty'}: not a run")
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
    bench(tmp_path, "price.py", *args)  # a run this small plays in its own process: no Ray
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
    bench(tmp_path, "price.py", *args)
    assert (history.stat().st_mtime_ns, data.read_text()) == before
    assert not (tmp_path / "elsewhere").exists()


def test_depth_price_prices_games_and_moves_and_goes_on_where_it_was(tmp_path):
    args = ["--games", "2", "--policies", "1", "2", "--per-move", "1", "auto:floor=1,cap=2",
            "--move-games", "1", "--per-group", "1", "--jobs", "1", "--out",
            str(tmp_path / "price.json")]
    out = bench(tmp_path, "depth_price.py", *args)
    games = out.split("per move")[0].splitlines()
    rows = {line.split()[0]: line.split() for line in games if line.split()[:1] in (["1"], ["2"])}
    assert rows["1"][1] == rows["2"][1] == "2"  # games played at each policy
    assert float(rows["2"][4]) > float(rows["1"][4])  # depth 2 evaluates more positions
    assert out.count("a depth-3 game's moves at") == 2
    held = json.loads((tmp_path / "price.json").read_text())
    priced = held["moves"]["auto:floor=1,cap=2"]
    assert [priced[board]["depth"] for tiles, group in held["groups"].items()
            for board in group["boards"]] == [
        min(max(1, int(tiles) - 2), 2) for tiles, group in held["groups"].items()
        for board in group["boards"]]
    again = bench(tmp_path, "depth_price.py", *args)
    assert "pricing" not in again and again == out.split("\n", 1)[1]


def test_depth_agreement_counts_a_policy_against_itself_as_agreeing_at_its_own_cost(tmp_path):
    out = bench(tmp_path, "depth_agreement.py", "--positions", "20", "--reference", "2",
                "--policies", "2", "nodes:3000")
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:]}
    assert rows["2"][1:3] == ["100.0%", "2.00"]
    assert float(rows["nodes:3000"][2]) < 2.0  # a small budget searches shallower, for less
    assert float(rows["nodes:3000"][3].rstrip("x")) <= float(rows["2"][3].rstrip("x"))


@pytest.mark.parametrize("games", [["--games", "4"], ["--adaptive", "2", "6"]],
                         ids=["fixed", "adaptive"])
def test_tuner_throughput_prints_a_row_per_worker_count(tmp_path, games):
    out = bench(tmp_path, "tuner_throughput.py", "--workers", "1", "--depth", "0",
                "--popsize", "4", "--generations", "2", "--games-per-task", "2", *games)
    rows = [line.split() for line in out.splitlines() if line.split()[:1] == ["1"]]
    assert len(rows) == 1 and rows[0][-1].endswith("%")


def test_strategy_cost_measures_every_strategy_and_goes_on_where_it_was(tmp_path):
    args = ["--config", str(BENCH.parent / "configs" / "quick.yaml"), "--target", "1",
            "--strategies", "racing:2-6", "uh-cma-es:4", "lra-cma-es:4", "--seeds", "1",
            "--validation-games", "4", "--max-generations", "1",
            "--workers", "1", "--out", str(tmp_path / "out")]
    first = bench(tmp_path, "strategy_cost.py", *args)
    assert "uh-cma-es:4 seed 1: generation 1," in first
    runs = list(csv.DictReader((tmp_path / "out" / "runs.csv").open()))
    assert [row["strategy"] for row in runs] == args[5:8]
    assert all(row["reached"] == "True" and int(row["positions_to_target"]) > 0 for row in runs)
    assert (tmp_path / "out" / "strategies.png").exists()
    again = bench(tmp_path, "strategy_cost.py", *args)
    assert "generation 1," not in again  # read from the run directories, not played again
    summary = first[first.index("cost until"):]
    assert summary.count("reached 1 of 1") == 9  # three strategies, three units
    assert again[again.index("cost until"):] == summary


@pytest.mark.parametrize(("spec", "problem"), [
    ("annealing:4", "annealing:4: the strategy is one of fixed, racing, population, uh-cma-es"),
    ("fixed:4x2", "fixed:4x2: fixed's population is not a multiple: write fixed:4"),
])
def test_strategy_cost_reads_a_strategy_as_its_registry_entry_says(tmp_path, spec, problem):
    """A name the registry lacks, or a factor for a strategy without one, is refused before
    any game is played."""
    done = subprocess.run([sys.executable, str(BENCH / "strategy_cost.py"), "--config",
                           str(BENCH.parent / "configs" / "quick.yaml"), "--target", "1",
                           "--strategies", spec, "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 2 and f"--strategies {problem}" in done.stderr
    assert not (tmp_path / "out").exists()


def test_strategy_cost_starts_from_a_weights_file(tmp_path):
    args = ["--config", str(BENCH.parent / "configs" / "quick.yaml"), "--target", "1",
            "--strategies", "fixed:4", "--seeds", "1", "--validation-games", "4",
            "--max-generations", "1", "--workers", "1", "--out", str(tmp_path / "out"),
            "--start", "classic-reference"]
    bench(tmp_path, "strategy_cost.py", *args)
    stored = yaml.safe_load((tmp_path / "out" / "fixed-4-seed1" / "config.yaml").read_text())
    assert stored["params"]["merges_weight"]["init"] == 700.0  # classic-reference's


def test_cluster_scale_prints_both_dispatches_and_writes_its_json(tmp_path):
    out = bench(tmp_path, "cluster_scale.py", "--configs", "snake", "--cpus", "2", "16",
                "--generations", "2", "--json", str(tmp_path / "shares.json"))
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["2"], ["16"])]
    assert len(rows) == 2 and all(row[2].endswith("%") and row[5].endswith("%") for row in rows)
    shares = json.loads((tmp_path / "shares.json").read_text())
    assert set(shares) == {"snake"} and set(shares["snake"]) == {"2", "16"}
    assert all(0 < share <= 1 for share in shares["snake"].values())


def test_a_simulated_cluster_on_few_cores_queues_the_tasks_work_for_them():
    """With ``cores``, the CPUs are processes sharing that many cores: a task's own CPU time
    waits for a free core, its (sleeping) games do not. Either way a worker builds the
    candidate's player before its first games, and keeps it for the next."""
    sys.path.insert(0, str(BENCH))
    try:
        from cluster_scale import SimulatedCluster, _SimulatedPool
    finally:
        sys.path.remove(str(BENCH))
    from engine.solver import GameResult, PlayerSpec
    from tuner.games.evaluation import Job
    from tuner.games.schedule import Unit

    class TenthOfASecond:
        def results(self, job, seeds):
            return [GameResult(seed, 0, 0, 0, 0.1, 0, 0) for seed in seeds]

    costs = {"driver_submit_s": 0.0, "driver_fetch_s": 0.0,
             "worker_task_s": 0.01, "machine_task_s": 0.01, "build_s": 0.005}
    ends = {}
    for cores in (None, 1):
        cluster = SimulatedCluster(4, TenthOfASecond(), costs, 1, cores=cores)
        cluster.sync = lambda: cluster.clock  # noqa: B023 - a driver that takes no time
        pool = _SimulatedPool(cluster, [Job(0, PlayerSpec("classic", {}, 1), ())])
        for i in range(4):
            pool.submit(Unit(0, i, (i,)))
        ends[cores] = sorted(round(p.end, 9) for p in pool.pending)
    assert ends[None] == [0.115] * 4  # a core for every CPU: the four tasks side by side
    assert ends[1] == [0.115, 0.125, 0.135, 0.145]  # one core: each task's Ray work in turn
    pool.submit(Unit(0, 4, (4,)))  # on a worker that has built this player: no second build
    assert round(pool.pending[-1].end, 9) == 0.115 + 0.01 + 0.1
