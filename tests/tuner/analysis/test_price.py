"""A run's price: the most games a config can play, counted exactly; the game times it is priced
at; ``tune run --dry-run``, which writes nothing and starts no Ray."""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from tuner.analysis import price, timing
from tuner.analysis.price import GameTime
from tuner.api.job import Quote
from tuner.cli.main import main
from tuner.config import parse_config, stored_text
from tuner.games import throughput
from tuner.games.policy import UnitSize
from tuner.games.seeds import training_seeds
from tuner.games.throughput import LoadSample, OtherWork
from tuner.space import SearchSpace
from tuner.store import checkpoint as ckpt


def tiny(tmp_path: Path, **sections) -> dict:
    """A config of a few games at depth 0, its sections updated with ``sections``."""
    doc = {
        "run": {"name": "tiny", "output_dir": str(tmp_path / "outputs"), "seed": 7},
        "family": "classic",
        "params": {
            "monotonicity_weight": {"init": 10, "low": 1, "high": 1000, "scale": "log"},
            "merges_weight": {"init": 100, "low": 10, "high": 10000, "scale": "log"},
        },
        "search": {"depth": 0, "cutoff": 0.0},
        "evaluation": {"games": 8},
        "cmaes": {"popsize": 4, "max_generations": 3},
        "validation": {"games": 10, "top_k": 2},
    }
    for name, values in sections.items():
        doc.setdefault(name, {}).update(values)
    return doc


def config_of(doc: dict):
    return parse_config(doc, "tiny.yaml")


def test_the_most_games_and_their_price_are_counted_exactly(tmp_path):
    config = config_of(tiny(tmp_path, validation={"every": 1}))
    games = price.most_games(config, cpus=2)
    # 3 generations of 4 candidates x 8 games; validation: (top 2 + the mean + the start + the
    # best guess after each of 3 generations) x 10 games
    assert (games.training, games.validation, games.total) == (96, 70, 166)
    result = price.price(config, 2, GameTime(0.5, "given"))
    assert result.cpu_seconds == 83.0
    assert result.wall_seconds(2) == price.START_SECONDS + 41.5
    assert result.training_share == pytest.approx(96 / 166)
    with_start = config_of(tiny(tmp_path, validation={"reference": "start"}))
    assert price.most_games(with_start, cpus=2).validation == (2 + 1 + 1) * 10  # the start once
    no_start = config_of(tiny(tmp_path, validation={"start": False}))
    assert price.most_games(no_start, cpus=2).validation == (2 + 1) * 10
    baseline = config_of(tiny(tmp_path, validation={"reference": "classic-reference"}))
    assert price.most_games(baseline, cpus=2).validation == (2 + 1 + 2) * 10  # start, baseline


def test_a_race_under_max_games_counts_every_candidate_at_max_and_one_generation_more(tmp_path):
    doc = tiny(tmp_path, evaluation={"games": {"min": 4, "max": 16}}, cmaes={"max_games": 100})
    del doc["cmaes"]["max_generations"]
    games = price.most_games(config_of(doc), cpus=2)
    # 4 candidates x 16 games a generation; the run stops once it has played 100
    assert (games.per_generation, games.training) == (64, 99 + 64)
    assert games.generations == 7  # as many as 100 games at 4 candidates x 4 games allow


def test_restarts_count_the_largest_population(tmp_path):
    restarted = price.most_games(config_of(tiny(tmp_path, cmaes={"restarts": 2})), cpus=2)
    assert (restarted.candidates, restarted.training) == (16, 3 * 16 * 8)


def test_popsize_auto_is_priced_at_each_cluster_size_with_its_own_population(tmp_path):
    config = config_of(tiny(tmp_path, cmaes={"popsize": "auto"}))
    small, large = (price.most_games(config, cpus) for cpus in (1, 512))
    assert small.candidates < large.candidates


def test_durations_read_as_people_read_them():
    assert [price.duration(s) for s in (40, 720, 35_760, 400_000)] == [
        "40 s", "12 min", "9 h 56 min", "4.6 days"]


@pytest.mark.parametrize("depth, rough", [
    (0, 1), (1, 1), (2, 2), (3, 3), ("auto:floor=1,cap=2", 2), ("auto:floor=1,cap=3", 3),
])
def test_a_game_measured_at_the_start_is_priced_at_its_depths_factors(tmp_path, monkeypatch,
                                                                      depth, rough):
    """The start's mean CPU time, times the positions and busy-core factors of the fixed depth
    the policy costs about as much as (a board rule: a few layers above its floor, at most its
    cap; depth 0 as depth 1)."""
    positions = price.POSITIONS_RUN_OVER_START.get(rough, price.POSITIONS_RUN_OVER_START_DEEPER)
    busy = price.BUSY_OVER_IDLE.get(rough, price.BUSY_OVER_IDLE_DEEPER)
    config = config_of(tiny(tmp_path, search={"depth": depth}))
    games = [timing.StartGame(0.25, 1_000), timing.StartGame(0.75, 3_000)]
    monkeypatch.setattr(timing, "start_game_times", lambda config, budget: games)
    measured = timing.measured_game_time(config)
    assert measured.seconds == pytest.approx(0.5 * positions * busy)
    assert (f"0.5 s +/- 50% a game (2k positions), x{positions:g} positions for a run's games "
            f"at this depth, x{busy:g} on busy cores") in measured.source


def test_the_start_is_timed_game_by_game_with_the_positions_each_searched(tmp_path):
    config = config_of(tiny(tmp_path, search={"depth": 1}))
    games = timing.start_game_times(config, 0.0)  # at least one game, whatever the budget
    assert len(games) == 1 and games[0].seconds > 0
    space = SearchSpace(config.params)
    seed = next(iter(training_seeds(config.run.seed, 1, 1)))
    played = config.player(space.weights(space.initial())).solver().play(seed)
    assert games[0].positions == played.moves_evaluated > 0


def test_positions_read_as_people_read_them():
    assert [price.positions_text(n) for n in (950, 2_000, 362_241, 11_160_264, 1.8e9)] == [
        "950", "2k", "362k", "11M", "1.8G"]


def test_an_earlier_run_of_the_config_gives_recorded_game_times(tmp_path):
    config = config_of(tiny(tmp_path))
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / ckpt.CONFIG_FILE).write_text(stored_text(config.resolved()))
    (run_dir / ckpt.CLUSTER_FILE).write_text(
        "generation,cpus,seconds,game_seconds,share\n1,2,5,8.0,0.8\n2,2,5,4.0,0.4\n")
    (run_dir / ckpt.HISTORY_FILE).write_text("generation,evaluations,games\n1,4,32\n2,8,64\n")
    recorded = price.recorded_game_time(run_dir, config)
    assert recorded.seconds == 12.0 / 64
    assert recorded.source.startswith(f"recorded by {run_dir}")
    deeper = config_of(tiny(tmp_path, search={"depth": 1}))
    assert price.recorded_game_time(run_dir, deeper) is None  # another search: not this run's
    assert price.recorded_game_time(tmp_path / "nothing", config) is None


def test_a_resumed_run_prices_what_is_left_at_its_own_game_times(tmp_path):
    config = config_of(tiny(tmp_path))
    state = SimpleNamespace(games=64, cluster=({"game_seconds": 16.0},))
    line = Quote.of(config, state).line(config, state.games, cpus=2)
    # 32 of the 3 x 4 x 8 training games left, and 40 to validate, at 16 s / 64 games
    assert line.startswith("price of what is left: at most 72 games (44% training), ")
    assert "recorded by this run: 0.25 s a game over 64 training games" in line
    # every cluster size prices what is left too: 72 games of 0.25 s, after Ray's start
    left = price.START_SECONDS + 72 * 0.25 / 16
    assert f"{price.duration(left)} on 16," in line


def test_dry_run_prints_the_price_writes_nothing_and_starts_no_ray(tmp_path, monkeypatch,
                                                                   capsys):
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny(tmp_path)))
    monkeypatch.setattr(timing, "MEASURE_SECONDS", 0.0)  # one game
    monkeypatch.setitem(sys.modules, "ray", None)  # importing Ray would raise
    monkeypatch.chdir(tmp_path)
    assert main(["--config", str(path), "--dry-run", "--workers", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "price of run tiny, at most:"
    assert out[1].split() == ["training", "games", "96", "(3", "generations", "x", "4",
                              "candidates", "x", "up", "to", "8", "games)"]
    assert "measured now: 1 game at the starting weights" in out[3]
    assert out[5].split()[2:5] == ["15", "s", "on"]  # the start: the games take no time here
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.yaml"]


def test_a_runs_rough_cpu_time_is_what_is_left_at_its_depths_rough_game_time(tmp_path):
    config = config_of(tiny(tmp_path))  # 96 training and 40 validation games at depth 0
    rough = UnitSize.rough_seconds(0)
    assert price.rough_cpu_seconds_left(config) == pytest.approx(136 * rough)
    assert price.rough_cpu_seconds_left(config, played=64) == pytest.approx(72 * rough)
    auto = config_of(tiny(tmp_path, cmaes={"popsize": "auto"}))
    assert price.rough_cpu_seconds_left(auto) is None  # its population follows the CPUs given


def test_dry_run_of_a_run_too_small_for_ray_prices_it_in_this_process(tmp_path, monkeypatch,
                                                                       capsys):
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny(tmp_path)))
    monkeypatch.setattr(timing, "MEASURE_SECONDS", 0.0)
    monkeypatch.setitem(sys.modules, "ray", None)
    monkeypatch.chdir(tmp_path)
    assert main(["--config", str(path), "--dry-run"]) == 0
    wall = capsys.readouterr().out.splitlines()[5]
    assert wall.split()[2:8] == ["1", "s", "on", "1", "idle", "CPU,"]  # this process's start
    assert wall.endswith("(in this process: too small to pay for Ray's start; --workers N "
                         "plays it on Ray)")


@pytest.mark.parametrize("argv, problem", [
    (["run", "missing.yaml", "--dry-run"], "missing.yaml: cannot read config"),
    (["--resume", "outputs/tiny", "--dry-run"], "--dry-run prices a new run"),
])
def test_bad_input_to_a_dry_run_is_one_line_and_exit_2(argv, problem, tmp_path, monkeypatch,
                                                       capsys):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("tune: error: ") and problem in err[0]
    assert list(tmp_path.iterdir()) == []


# ---- the machine's other work while timing, and a price that is a range -----------------------

def test_other_work_is_the_machines_busy_ticks_less_this_processs_own_cpu_time():
    """/proc/stat's ticks of every core between two samples, less the timing process's own."""
    before = LoadSample((1_000, 2_000), own=5.0, wall=100.0, load=None)
    busy = throughput.other_work(before, LoadSample((1_150, 2_200), 6.0, 101.0, None), cores=2)
    assert busy == OtherWork(0.5, 2, "/proc/stat") and busy.busy  # 1.5 cores busy, 1 of them ours
    idle = throughput.other_work(before, LoadSample((1_100, 2_200), 6.0, 101.0, None), cores=2)
    assert idle == OtherWork(0.0, 2, "/proc/stat") and not idle.busy
    assert busy.describe() == "other work kept 0.5 of 2 cores busy, by /proc/stat"


def test_too_few_ticks_fall_back_on_the_load_average_and_without_either_nothing_is_known():
    before = LoadSample((0, 0), 0.0, 0.0, None)
    other = throughput.other_work(before, LoadSample((10, 20), 0.06, 0.06, 1.5), cores=4)
    # the load average less the little a 0.06 s timing could add to it
    assert other.how == "load average" and other.cores == pytest.approx(1.499, abs=1e-3)
    assert other.busy
    assert throughput.other_work(before, LoadSample(None, 0.06, 0.06, None), cores=4) is None


def machine(monkeypatch, busy_ticks: int) -> None:
    """Every timing sees 2 cores, ``busy_ticks`` of 200 busy while it took 1 s of our CPU."""
    samples = itertools.cycle([LoadSample((0, 0), 0.0, 0.0, None),
                               LoadSample((busy_ticks, 200), 1.0, 1.0, None)])
    monkeypatch.setattr(throughput, "sample_load", lambda: next(samples))
    monkeypatch.setattr(throughput.os, "cpu_count", lambda: 2)


def timed(monkeypatch, *games: timing.StartGame) -> None:
    monkeypatch.setattr(timing, "start_game_times", lambda config, budget=None: list(games))


@pytest.mark.parametrize("busy_ticks, spread, words", [
    (150, timing.BUSY_TIMING_SPREAD, ("timed on a busy machine (other work kept 0.5 of 2 cores "
                                     "busy, by /proc/stat): on an idle one as little as 1/1.55 "
                                     "of that")),
    (100, 1.0, "timed on an idle machine (other work kept 0.0 of 2 cores busy, by /proc/stat)"),
])
def test_a_game_time_timed_on_a_busy_machine_is_a_range_and_says_how_busy(
        tmp_path, monkeypatch, busy_ticks, spread, words):
    machine(monkeypatch, busy_ticks)
    timed(monkeypatch, timing.StartGame(0.25, 1_000), timing.StartGame(0.75, 3_000))
    measured = timing.measured_game_time(config_of(tiny(tmp_path)))
    assert measured.spread == spread and measured.source.endswith(f"; {words}")
    assert measured.low == pytest.approx(measured.seconds / spread)
    assert measured.idle_rate == 4_000 / 1.0  # the positions per CPU-second of the games timed


def test_a_price_at_a_range_of_game_times_is_a_range_on_idle_cpus(tmp_path):
    config = config_of(tiny(tmp_path))
    result = price.price(config, 2, GameTime(1.0, "given", spread=2.0))
    games = result.games.total
    assert price.cpu_hours(result) == f"{price.hours(games / 2)} to {price.hours(games)}"
    lines = price.report(result, 2, config, "")
    assert lines[3].split("(")[0].split() == ["game", "time", "0.5", "s", "to", "1", "s"]
    walls = (f"{price.duration(price.START_SECONDS + games / 4)} to "
             f"{price.duration(price.START_SECONDS + games / 2)} on 2 idle CPUs, ")
    assert lines[5].startswith(f"  wall time         {walls}")
    assert f"CPU-hours: {walls}" in price.summary(result, 2, config)
    timed_idle = price.price(config, 2, GameTime(1.0, "given"))
    assert " to " not in price.walls(timed_idle, 2, config) + price.cpu_hours(timed_idle)


def test_more_cpus_than_a_generation_has_games_are_left_idle_and_the_price_says_why(tmp_path):
    config = config_of(tiny(tmp_path))  # a generation: 4 candidates x 8 games
    minute = GameTime(60.0, "given")
    result = price.price(config, 64, minute)
    g = result.games
    assert result.wall_seconds(64) == pytest.approx(
        price.START_SECONDS + g.training * 60 / 32 + g.validation * 60 / min(64, g.validation_round))
    assert price.walls(price.price(config, 2, minute), 2, config).endswith(
        "(on 64 CPUs a generation's 32 games keep only 32 busy)")
    small = price.walls(price.price(config, 1, GameTime(0.001, "given"), here=True), 1, config)
    assert small == "1 s on 1 idle CPU, 15 s on 16, 15 s on 64 (on 64 CPUs most of it is Ray's " \
                    "start, about 15 s)"
    wide = config_of(tiny(tmp_path, cmaes={"popsize": 64}, validation={"games": 64}))
    assert price.no_sooner(price.price(wide, 64, GameTime(1.0, "given")), 64) is None


def test_dry_run_and_the_runs_own_price_line_give_one_price_from_one_timing(tmp_path, monkeypatch,
                                                                           capsys):
    """The run times the games --dry-run times, on a machine as busy: the same figures, and its
    idle-core calibration from the same games."""
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny(tmp_path)))
    machine(monkeypatch, 150)
    timed(monkeypatch, timing.StartGame(0.002, 3_000), timing.StartGame(0.004, 5_000))
    monkeypatch.setitem(sys.modules, "ray", None)  # a run this small plays in this process
    monkeypatch.chdir(tmp_path)
    assert main(["--config", str(path), "--dry-run"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert main(["--config", str(path)]) == 0
    [line] = [line for line in capsys.readouterr().err.splitlines() if line.startswith("price:")]
    cpu_hours = table[4].split("CPU-hours", 1)[1].split("  (")[0].strip()
    walls = table[5].split("wall time", 1)[1].strip().removesuffix(
        " (in this process: too small to pay for Ray's start; --workers N plays it on Ray)")
    source = table[3].split("  (", 1)[1].removesuffix(")")
    assert " to " in cpu_hours and "timed on a busy machine" in source
    assert f", {cpu_hours} CPU-hours: {walls}; game time {source}" in line
    assert line.endswith(source)
    status = json.loads((tmp_path / "outputs" / "tiny" / ckpt.STATUS_FILE).read_text())
    assert status["idle_rate"] == pytest.approx(8_000 / 0.006)
