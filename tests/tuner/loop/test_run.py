"""The tuning loop: convergence on a synthetic objective, resume equivalence, best-so-far files."""

from __future__ import annotations

import csv
import json
import logging
import math
import pickle
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import JobsEvaluator, run_tune

from engine import Solver, read_weights
from engine.atomic import is_temp_file
from engine.solver import GameResult
from tuner.config import parse_config
from tuner.errors import CheckpointError, ConfigError
from tuner.games.evaluation import SerialEvaluator
from tuner.games.fitness import Fitness
from tuner.games.seeds import training_seeds, validation_seeds
from tuner.loop.observers import Observer, validation_csv
from tuner.loop.run import TuningRun
from tuner.loop.step import GenerationStep
from tuner.loop.validation import validate
from tuner.store import checkpoint as ckpt
from tuner.store.store import DirectoryStore, MemoryStore

OPTIMUM = {"monotonicity_weight": 60.0, "merges_weight": 900.0, "empty_weight": 300.0}


def config_dict(tmp_path: Path, **overrides) -> dict:
    doc = {
        "run": {"name": "t", "output_dir": str(tmp_path), "seed": 7},
        "family": "classic",
        "params": {
            "lost_penalty": {"fixed": 200000},
            "monotonicity_weight": {"init": 10, "low": 1, "high": 1000, "scale": "log"},
            "merges_weight": {"init": 100, "low": 10, "high": 10000, "scale": "log"},
            "empty_weight": {"init": 50, "low": 10, "high": 10000, "scale": "log"},
        },
        "search": {"depth": 0, "cutoff": 0.0},
        "evaluation": {"games": 4},
        "cmaes": {"sigma0": 0.3, "popsize": 6, "max_generations": 4},
        "validation": {"games": 8, "top_k": 2},
    }
    for path, value in overrides.items():
        section, key = path.split(".")
        doc[section][key] = value
    return doc


class SyntheticEvaluator(JobsEvaluator):
    """Scores candidates by distance to OPTIMUM (in log space) plus seeded noise; no games."""

    workers = 1

    def __init__(self):
        self.calls = 0

    def play(self, jobs, progress=None):
        self.calls += 1
        out = []
        for job in jobs:
            distance = sum(
                (math.log(job.spec.weights[k]) - math.log(v)) ** 2 for k, v in OPTIMUM.items()
            )
            results = []
            for seed in job.seeds:
                noise = np.random.default_rng(seed % 2**32).normal(0, 200)
                score = int(100_000 * math.exp(-distance) + noise + 1000)
                results.append(GameResult(seed, score, 2048, 100, 0.001, 1000, 0))
            if progress:
                progress(len(results))
            out.append(results)
        return out


def test_loop_converges_on_a_synthetic_objective(tmp_path):
    config = parse_config(
        config_dict(tmp_path, **{"cmaes.max_generations": 40, "evaluation.games": 2}), "synthetic"
    )
    run = TuningRun.start(config, tmp_path / "t", progress=False)
    state = run.run(SyntheticEvaluator())
    assert state.generation == 40
    best = read_weights(tmp_path / "t" / "best.yaml")
    for name, target in OPTIMUM.items():
        assert abs(math.log(best.weights[name] / target)) < 0.15, (name, best.weights[name])
    history = state.history
    assert history[-1]["best"] > 95_000 > history[0]["best"]
    assert best.provenance["status"] == "validated"


def test_a_winner_at_the_edge_of_its_box_is_warned_about(tmp_path):
    # OPTIMUM's merges_weight (900) lies above this box: the winner ends at its upper bound
    doc = config_dict(tmp_path, **{"cmaes.max_generations": 40, "evaluation.games": 2})
    doc["params"]["merges_weight"] = {"init": 100, "low": 10, "high": 500, "scale": "log"}
    run = TuningRun.start(parse_config(doc, "synthetic"), tmp_path / "t", progress=False)
    records = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = records.append
    logger = logging.getLogger("tuner.loop.run")  # "tuner" may not propagate: listen here
    logger.addHandler(handler)
    try:
        run.run(SyntheticEvaluator())
    finally:
        logger.removeHandler(handler)
    warnings = [r.getMessage() for r in records]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("warning: merges_weight = ")
    assert "is at the upper end of its box (500)" in warnings[0]


def run_generations(tmp_path: Path, name: str, generations: int, resume_at: int | None):
    """A real (depth 0) run, optionally stopped after ``resume_at`` generations and resumed."""
    doc = config_dict(tmp_path, **{"run.name": name, "cmaes.max_generations": generations})
    config = parse_config(doc, "test")
    run_dir = tmp_path / name
    evaluator = SerialEvaluator(3)
    if resume_at is None:
        TuningRun.start(config, run_dir, progress=False).run(evaluator)
        return run_dir
    first = parse_config(
        config_dict(tmp_path, **{"run.name": name, "cmaes.max_generations": resume_at}), "test"
    )
    TuningRun.start(first, run_dir, progress=False).run(evaluator)
    state = ckpt.load_state(run_dir)
    assert state.generation == resume_at and state.finished
    TuningRun.resume(config, run_dir, state, progress=False).run(evaluator)
    return run_dir


def test_resumed_run_equals_uninterrupted_run(tmp_path):
    straight = run_generations(tmp_path, "straight", 5, None)
    resumed = run_generations(tmp_path, "resumed", 5, 2)
    assert (straight / "history.csv").read_text() == (resumed / "history.csv").read_text()
    a, b = ckpt.load_state(straight), ckpt.load_state(resumed)
    assert [e.x for e in a.elites] == [e.x for e in b.elites]
    assert a.games == b.games == 5 * 6 * 4
    assert read_weights(straight / "best.yaml").weights == read_weights(resumed / "best.yaml").weights


class Interrupted(SyntheticEvaluator):
    """Interrupted, as by Ctrl-C, at the unit that would take its games past ``limit``; counts
    the games it plays."""

    def __init__(self, limit: int | None = None):
        super().__init__()
        self.limit = limit
        self.played = 0

    def play(self, jobs, progress=None):
        games = sum(len(job.seeds) for job in jobs)
        if self.limit is not None and self.played + games > self.limit:
            raise KeyboardInterrupt
        self.played += games
        return super().play(jobs, progress)


RACE = {"min": 2, "max": 6, "batch": 2}


# 4 generations of 6 candidates x 4 fixed games (96), then 4 players x 8 validation games (128
# in all), a candidate's games one unit: stopped in generation 1, in generation 2, in validation;
# and in a run whose candidates race (its rounds' units answered from the kept games)
@pytest.mark.parametrize(("games", "limit"), [(4, 10), (4, 34), (4, 105), (RACE, 40)],
                         ids=["generation-1", "generation-2", "validation", "race"])
def test_a_run_stopped_mid_phase_goes_on_without_playing_the_games_it_kept(tmp_path, games,
                                                                           limit):
    def config(name):
        return parse_config(config_dict(tmp_path, **{"run.name": name,
                                                     "evaluation.games": games}), "test")

    straight, straight_games = tmp_path / "straight", Interrupted()
    TuningRun.start(config("straight"), straight, progress=False).run(straight_games)
    run_dir = tmp_path / "stopped"
    run = TuningRun.start(config("stopped"), DirectoryStore.new(run_dir, False, True),
                          progress=False)
    with pytest.raises(KeyboardInterrupt):
        run.run(Interrupted(limit))
    run.store.close()
    lines = (run.store.location / ckpt.KEPT_GAMES_FILE).read_text().splitlines()[1:]
    kept = sum(len(json.loads(line)["games"]) for line in lines)
    assert 0 < kept < limit
    again = Interrupted()
    found = []  # each generation's games found kept, as its record says
    counted = []  # what an observer that knows nothing of kept games counts

    class Found(Observer):
        def generation_ended(self, record, state):
            found.append(record.spent.kept)

        def games_played(self, count):
            counted.append(count)

    if run.checkpointed:  # resumed from its checkpoint
        state = ckpt.load_state(run_dir)
        checkpointed, validating = state.games, state.generation == 4
        TuningRun.resume(config("stopped"), run_dir, state, progress=False).run(
            again, observers=[Found()])
    else:  # started again: the staging directory kept its games alone
        checkpointed, validating = 0, False
        staged = tmp_path / ".stopped.new"
        assert [p.name for p in staged.iterdir()] == [ckpt.KEPT_GAMES_FILE]
        store = DirectoryStore.new(run_dir, False, True)
        TuningRun.start(config("stopped"), store, progress=False).run(again,
                                                                        observers=[Found()])
        store.close()
    assert again.played == straight_games.played - checkpointed - kept
    assert found == ([] if validating else [kept, *[0] * (len(found) - 1)])
    assert sum(counted) == again.played + kept
    for name in (ckpt.HISTORY_FILE, ckpt.VALIDATION_FILE):
        assert (run_dir / name).read_text() == (straight / name).read_text()
    assert read_weights(run_dir / "best.yaml").weights == read_weights(
        straight / "best.yaml").weights
    assert not (run_dir / ckpt.KEPT_GAMES_FILE).exists()  # the last checkpoint emptied it


class InUnitsOfFour(Interrupted):
    """``Interrupted``, every schedule's units of at most four games."""

    unit_games = 4


def test_a_generation_counts_as_kept_its_training_games_not_its_best_guesses(tmp_path):
    # validation.every 1: each generation plays 6 x 4 training games, then its best guess on 8
    # validation seeds, in two units. Stopped at 62 games: generation 2's 24 training games and
    # its best guess's first unit (4) are kept, its second unit not played.
    config = parse_config(config_dict(tmp_path, **{"validation.every": 1}), "test")
    run_dir = tmp_path / "t"
    with pytest.raises(KeyboardInterrupt):
        TuningRun.start(config, run_dir, progress=False).run(InUnitsOfFour(62))
    units = (run_dir / ckpt.KEPT_GAMES_FILE).read_text().splitlines()[1:]
    assert [len(json.loads(unit)["games"]) for unit in units] == [4] * 7
    found = []

    class Found(Observer):
        def generation_ended(self, record, state):
            found.append((record.spent.kept, record.spent.games))

    again = InUnitsOfFour()
    TuningRun.resume(config, run_dir, ckpt.load_state(run_dir), progress=False).run(
        again, observers=[Found()])
    assert found[0] == (24, 24)  # the best guess's 4 kept games are not training games
    assert again.played == (4 - 2) * 32 + 32 + 4  # generations 3 and 4, validation, 1 unit


def test_every_generation_is_checkpointed_with_best_so_far(tmp_path):
    doc = config_dict(tmp_path, **{"cmaes.max_generations": 3})
    config = parse_config(doc, "test")
    run = TuningRun.start(config, tmp_path / "t", progress=False)
    run.step(SerialEvaluator(4))
    state = ckpt.load_state(tmp_path / "t")
    assert state.generation == 1 and len(state.history) == 1
    best = read_weights(tmp_path / "t" / "best.yaml")
    assert best.provenance["status"].startswith("in progress")
    assert best.weights == state.elites[0].weights
    # a run in progress already gives weights the engine can play
    assert Solver.from_file(tmp_path / "t" / "best.yaml").play(1, max_moves=20).moves == 20
    assert yaml.safe_load((tmp_path / "t" / "config.yaml").read_text()) == config.resolved()
    assert not [p for p in (tmp_path / "t").iterdir() if is_temp_file(p)]


def test_candidates_of_a_generation_share_seeds_and_seeds_change_per_generation(tmp_path):
    seen: list[tuple] = []

    class Recording(SerialEvaluator):
        def run(self, jobs, schedule, progress=None):
            seen.append(tuple(job.seeds for job in jobs))
            return super().run(jobs, schedule, progress)

    config = parse_config(config_dict(tmp_path, **{"cmaes.max_generations": 2}), "test")
    TuningRun.start(config, tmp_path / "t", progress=False).run(Recording(4))
    gen1, gen2, validation = seen
    assert len(set(gen1)) == 1 and len(set(gen2)) == 1
    assert gen1[0] == tuple(training_seeds(7, 1, 4)) and gen2[0] == tuple(training_seeds(7, 2, 4))
    assert set(gen1[0]).isdisjoint(gen2[0])
    assert validation[0] == tuple(validation_seeds(7, 8)) and len(set(validation)) == 1
    assert len(validation) == 4  # top_k = 2 elites, the distribution mean and the start


def test_max_games_stops_the_run(tmp_path):
    doc = config_dict(tmp_path, **{"cmaes.max_generations": None, "cmaes.max_games": 50})
    state = TuningRun.start(parse_config(doc, "test"), tmp_path / "t", progress=False).run(
        SyntheticEvaluator()
    )
    assert state.generation == 3  # 24 games per generation: 24, 48, 72 >= 50
    assert "max_games" in state.stop_reason


@pytest.mark.parametrize("fitness", ["reach_rate", "score_quantile"])
def test_other_fitness_kinds_drive_the_loop(tmp_path, fitness):
    doc = config_dict(tmp_path, **{"evaluation.fitness": fitness, "evaluation.tile": 256,
                                   "cmaes.max_generations": 1})
    state = TuningRun.start(parse_config(doc, "test"), tmp_path / "t", progress=False).run(
        SerialEvaluator(4)
    )
    best = state.history[0]["best"]
    if fitness == "reach_rate":
        assert 0.0 <= best <= 1.0
    else:
        assert best > 100


class FlatEvaluator(SyntheticEvaluator):
    """Every candidate scores the same: pycma soon stops on a flat fitness (tolflatfitness)."""

    def play(self, jobs, progress=None):
        self.calls += 1
        return [[GameResult(seed, 1000, 128, 50, 0.001, 100, 0) for seed in job.seeds]
                for job in jobs]


def test_the_generation_that_triggers_a_restart_records_its_own_strategy(tmp_path):
    doc = config_dict(tmp_path, **{"cmaes.max_generations": 200, "cmaes.restarts": 1,
                                   "cmaes.popsize": 4, "evaluation.games": 1})
    run = TuningRun.start(parse_config(doc, "test"), tmp_path / "t", progress=False)
    state = run.run(FlatEvaluator())
    assert "cma-es termination" in state.stop_reason
    history = state.history
    first = [row for row in history if row["restart"] == 0]
    second = [row for row in history if row["restart"] == 1]
    assert first and second and len(first) + len(second) == len(history)
    assert {row["popsize"] for row in first} == {4} and {row["popsize"] for row in second} == {8}
    # the last generation of the first strategy: its own sigma, not the new strategy's sigma0
    assert first[-1]["generation"] + 1 == second[0]["generation"]
    assert first[-1]["sigma"] != pytest.approx(0.3)


@pytest.mark.parametrize("overflowing", [[1], [0, 1]], ids=["one", "both"])
def test_a_candidate_whose_heuristic_overflows_is_refused_and_its_generation_not_kept(
        tmp_path, overflowing):
    # each box is finite at both ends (the others at init), but both highs together overflow
    doc = config_dict(tmp_path)
    doc["params"] = {
        "sum_power": {"init": 1, "low": 1, "high": 250},
        "sum_weight": {"init": 1, "low": 1, "high": 1e290, "scale": "log"},
    }
    run = TuningRun.start(parse_config(doc, "joint.yaml"), tmp_path / "t", progress=False)
    run.strategy.ask = lambda: [np.array([1.0, 1.0]) if i in overflowing else
                                np.array([0.5, 0.5]) for i in range(2)]
    with pytest.raises(ConfigError) as caught:
        run.step(SerialEvaluator(1))  # its players check their tables
    message = str(caught.value)
    # the first candidate in order, whatever unit failed first
    assert message.startswith(f"joint.yaml: params: generation 1, candidate {overflowing[0]}: "
                              "the heuristic is not finite (")
    assert "caused by sum_power = 250 and sum_weight = 1e+290" in message
    assert "start a new run" in message
    assert run.state.generation == 0 and not (tmp_path / "t" / "checkpoint.pkl").exists()


def test_a_distribution_mean_whose_heuristic_overflows_is_left_out_of_validation(tmp_path):
    config = parse_config(config_dict(tmp_path, **{"cmaes.max_generations": 1}), "test")
    run = TuningRun.start(config, tmp_path / "t", progress=False)
    run.step(SyntheticEvaluator())
    mean = run.space.weights(run.strategy.result.mean)
    games = run.games()
    games.heuristic_problem = lambda weights: "overflows" if weights == mean else None
    rows, winner = validate(games, run.space, run.state, run.strategy.result.mean)
    assert winner in rows
    assert [row.label for row in rows] == ["elite 1", "elite 2", "start"]


def validated(tmp_path: Path, inits: dict | None = None, **validation):
    """One generation on ``SyntheticEvaluator``, then the validation: the run, rows, winner."""
    doc = config_dict(tmp_path, **{"cmaes.max_generations": 1})
    doc["validation"].update(validation)
    for name, init in (inits or {}).items():
        doc["params"][name]["init"] = init
    run = TuningRun.start(parse_config(doc, "test"), tmp_path / "t", progress=False)
    run.step(SyntheticEvaluator())
    return (run, *validate(run.games(), run.space, run.state, run.strategy.result.mean))


def test_the_start_plays_the_validation_seeds_and_each_gain_over_it_is_paired(tmp_path):
    run, rows, winner = validated(tmp_path)
    assert [row.label for row in rows] == ["elite 1", "elite 2", "distribution mean", "start"]
    start = rows[-1]
    assert start.generation == 0 and start.weights == run.space.weights(run.space.initial())
    assert winner is not start and start.vs_start == Fitness(0.0, 0.0, 8)
    for row in rows[:-1]:
        assert row.vs_start.value == pytest.approx(row.fitness.value - start.fitness.value)
        assert row.vs_start.games == 8 and row.fitness.stderr > 0
        # SyntheticEvaluator's noise is the seed's, the same for every player: paired, it
        # cancels (all but the rounding of each score)
        assert row.vs_start.stderr < row.fitness.stderr / 100
    table = list(csv.DictReader(validation_csv(rows).splitlines()))
    assert [float(r["vs_start"]) for r in table] == [row.vs_start.value for row in rows]
    assert [float(r["vs_start_stderr"]) for r in table] == [row.vs_start.stderr for row in rows]


def test_the_start_never_wins_even_as_the_best_player(tmp_path):
    _run, rows, winner = validated(tmp_path, OPTIMUM)  # the start at the optimum
    assert rows[-1].label == "start" and winner.label != "start"
    assert rows[-1].fitness.value > max(row.fitness.value for row in rows[:-1])
    assert winner.vs_start.value < 0


def test_validation_start_false_plays_no_start_and_writes_the_table_of_before(tmp_path):
    _run, rows, _winner = validated(tmp_path, start=False)
    assert [row.label for row in rows] == ["elite 1", "elite 2", "distribution mean"]
    assert all(row.vs_start is None for row in rows)
    assert "vs_start" not in validation_csv(rows).splitlines()[0]


@pytest.mark.parametrize(("validation", "marks"), [
    ({"reference": "start"}, ["start"]),  # the start once, whatever validation.start says
    ({"reference": "start", "start": False}, ["start"]),
    ({"reference": "classic-reference"}, ["start", "baseline classic-reference"]),
    ({"reference": "classic-reference", "start": False}, ["baseline classic-reference"]),
])
def test_a_reference_is_validated_after_the_candidates_beside_the_start(tmp_path, validation,
                                                                        marks):
    _run, rows, winner = validated(tmp_path, **validation)
    assert [row.label for row in rows] == ["elite 1", "elite 2", "distribution mean", *marks]
    assert winner.label not in marks
    assert all((row.vs_start is not None) == ("start" in marks) for row in rows)


# A run directory written by tune2048 0.1.0 (fixed budgets, checkpoint version 2), stopped after
# generation 2 of 4, and what it writes when resumed to the end. 0.1.0 wrote it on a machine whose
# OpenBLAS ran AVX-512 kernels; since OpenBLAS runs one set of kernels everywhere (engine.blas),
# its resumed generations are those of the AVX2 kernels, recorded here.
RUN_0_1_0 = Path(__file__).resolve().parents[2] / "data" / "run-0.1.0"
RUN_0_1_0_FINISHED = RUN_0_1_0.with_name("run-0.1.0-finished")


def test_a_run_directory_of_tune2048_0_1_0_resumes_exactly(tmp_path):
    run_dir = tmp_path / "run-0.1.0"
    shutil.copytree(RUN_0_1_0, run_dir)
    state = ckpt.load_state(run_dir)
    config = parse_config(ckpt.read_stored_config(run_dir), str(run_dir / ckpt.CONFIG_FILE),
                          run_dir)
    TuningRun.resume(config, run_dir, state, progress=False).run(SerialEvaluator())
    for name in (ckpt.HISTORY_FILE, ckpt.VALIDATION_FILE):
        assert same_columns(run_dir / name, RUN_0_1_0_FINISHED / name), name
    # and the start, which 0.1.0 did not validate, below its rows
    with (run_dir / ckpt.VALIDATION_FILE).open() as table:
        assert [row["candidate"] for row in csv.DictReader(table)][-1] == "start"
    assert read_weights(run_dir / ckpt.BEST_FILE).weights == \
        read_weights(RUN_0_1_0_FINISHED / ckpt.BEST_FILE).weights


def test_a_run_directory_of_0_1_0_resumes_with_an_edited_stop_condition(tmp_path, no_ray):
    """Its config.yaml holds ``evaluation.reevaluate_best: 0``, a key tune2048 0.4.0 removed:
    at that value, the same run as one without it, so a copy with a higher
    ``max_generations`` resumes it (the run's own advice once it has finished)."""
    shutil.copytree(RUN_0_1_0, tmp_path / "run-0.1.0")
    document = yaml.safe_load((tmp_path / "run-0.1.0" / ckpt.CONFIG_FILE).read_text())
    assert document["evaluation"]["reevaluate_best"] == 0
    document["cmaes"]["max_generations"] = 6
    (tmp_path / "edited.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    result = run_tune(["resume", "run-0.1.0", "--config", "edited.yaml"], tmp_path, no_ray)
    assert result.returncode == 0, result.stderr
    assert "done: reached max_generations (6)" in result.stderr
    assert len(ckpt.load_state(tmp_path / "run-0.1.0").history) == 6


def same_columns(path: Path, expected: Path) -> bool:
    """The rows of ``path`` hold ``expected``'s columns with the same values (new columns are
    allowed, and the start's row, which tune2048 before 0.4 did not validate)."""
    with path.open() as got, expected.open() as want:
        rows, wanted = list(csv.DictReader(got)), list(csv.DictReader(want))
    rows = [row for row in rows if row.get("candidate") != "start"]
    return len(rows) == len(wanted) and all(
        {key: row[key] for key in want_row} == want_row for row, want_row in zip(rows, wanted))


class ScriptedEvaluator(JobsEvaluator):
    """Each candidate scores its ``merges_weight`` plus seeded noise of ``spread[merges_weight]``;
    records how many games each candidate played."""

    workers = 1

    def __init__(self, spread: dict[float, float]):
        self.spread = spread
        self.played: dict[float, int] = {}

    def play(self, jobs, progress=None):
        out = []
        for job in jobs:
            level = job.spec.weights["merges_weight"]
            self.played[level] = self.played.get(level, 0) + len(job.seeds)
            out.append([GameResult(seed, int(level + self.spread[level] * np.random.default_rng(
                seed % 2**32).standard_normal()), 2048, 100, 0.001, 1000, 0)
                for seed in job.seeds])
        return out


def test_adaptive_games_go_to_the_candidates_whose_rank_is_undecided(tmp_path):
    """Six candidates 1000 apart; two of them (3000 and 3100) with a spread that overlaps their
    neighbours: they, and the neighbours they could swap with, play more; the rest stop at min."""
    config = parse_config(config_dict(tmp_path, **{
        "evaluation.games": {"min": 8, "max": 64, "batch": 8},
        "cmaes.popsize": 6}), "adaptive")
    spread = {1000.0: 10.0, 2000.0: 10.0, 3000.0: 2000.0, 3100.0: 2000.0, 5000.0: 10.0,
              6000.0: 10.0}
    run = TuningRun.start(config, tmp_path / "run", progress=False)
    run.evaluator = ScriptedEvaluator(spread)
    weight_sets = [{**run.space.weights(run.space.initial()), "merges_weight": level}
                   for level in spread]
    budget = run.config.evaluation.games
    step = GenerationStep(run.config, run.space, run.strategy, run.games())
    results, fits = step.play_generation(weight_sets, 1, budget)
    played = run.evaluator.played
    assert [len(r) for r in results] == [played[level] for level in spread]
    assert played[3000.0] == played[3100.0] == 64
    assert played[1000.0] == played[6000.0] == 8  # never in doubt: the worst and the best
    assert [f.games for f in fits] == [len(r) for r in results]
    assert [r.seed for r in results[2]] == training_seeds(7, 1, 64)  # the generation's seeds
    assert [r.seed for r in results[0]] == training_seeds(7, 1, 8)  # their first 8


def test_an_adaptive_run_records_the_games_it_played_and_saved(tmp_path):
    doc = config_dict(tmp_path, **{"evaluation.games": {"min": 4, "max": 32, "batch": 4},
                                   "cmaes.max_generations": 3})
    state = TuningRun.start(parse_config(doc, "adaptive"), tmp_path / "t",
                            progress=False).run(SyntheticEvaluator())
    total = 0
    for row in state.history:
        assert 4 <= row["games_min"] <= row["games_mean"] <= row["games_max"] <= 32
        assert row["games_saved"] == row["popsize"] * 32 - row["games_mean"] * row["popsize"]
        total += row["games_mean"] * row["popsize"]
        assert row["games"] == total
    assert state.history[-1]["games_saved"] > 0


@pytest.mark.parametrize(("strategy", "message"), [
    (pickle.dumps({"libraries": {"cma": "9.0.0", "numpy": "9.0.0"}, "state": b"\x80\x05junk"}),
     "the CMA-ES state was written with cma 9.0.0, numpy 9.0.0 and cannot be read with cma "),
    (b"\x80\x05junk", "it was written by tune2048 0.1.0 with other versions of them"),
], ids=["named-versions", "0.1.0-layout"])
def test_a_strategy_state_from_other_library_versions_is_refused_saying_which(tmp_path, strategy,
                                                                              message):
    """pycma's and numpy's pickles load only under versions close to those that wrote them: a
    run moved to a machine with others is refused in one line that names both."""
    config = parse_config(config_dict(tmp_path), "t")
    run = TuningRun.start(config, tmp_path / "t", progress=False)
    run.state.strategy = strategy
    ckpt.save_state(run.run_dir, run.state)
    with pytest.raises(CheckpointError) as info:
        TuningRun.resume(config, run.run_dir, ckpt.load_state(run.run_dir), progress=False)
    assert str(info.value).startswith(f"{run.run_dir / ckpt.CHECKPOINT_FILE}: ")
    assert message in str(info.value) and "\n" not in str(info.value)


class Watching(Observer):
    """An observer from outside: what a bench or a live status would see of a run."""

    def __init__(self):
        self.phases: list[tuple[str, int]] = []
        self.played = 0
        self.records = []
        self.validated = []

    def games_started(self, label, total, up_to):
        self.phases.append((label, total))

    def games_played(self, count):
        self.played += count

    def generation_ended(self, record, state):
        self.records.append((record, len(state.history)))

    def validation_ended(self, rows, winner, state):
        self.validated.append((rows, winner, state.finished))


def test_an_observer_given_to_a_run_sees_every_generation_and_the_validation(tmp_path):
    config = parse_config(config_dict(tmp_path, **{"cmaes.max_generations": 2}), "test")
    watching = Watching()
    state = TuningRun.start(config, MemoryStore(), progress=False).run(SyntheticEvaluator(),
                                                                      [watching])
    assert [record.row for record, _ in watching.records] == state.history
    assert [seen for _, seen in watching.records] == [1, 2]  # the state holds the record
    assert [record.generation for record, _ in watching.records] == [1, 2]
    assert all(sum(record.played) == record.spent.games for record, _ in watching.records)
    [(rows, winner, finished)] = watching.validated
    assert finished and winner in rows and winner.fitness.value == max(r.fitness.value
                                                                       for r in rows)
    assert watching.phases[0][0] == "gen 1 of 2" and watching.phases[-1][0] == "validation"
    assert watching.played == state.games + len(rows) * config.validation.games
