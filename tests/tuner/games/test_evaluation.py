"""Evaluation backends: the same jobs give the same results in process and on Ray."""

from __future__ import annotations

import pytest

from engine.external.player import EngineCommand, EnginePlayer
from engine.solver import PlayerSpec
from tuner.cluster.ray_evaluator import RayEvaluator
from tuner.errors import EvaluationError
from tuner.games.budget import AdaptiveGames
from tuner.games.evaluation import Job, SerialEvaluator, rough_cpu_seconds_of_jobs
from tuner.games.fitness import score_fitness
from tuner.games.policy import DISPATCHES, SchedulePolicy, UnitSize
from tuner.games.schedule import GenerationGames

CLASSIC = PlayerSpec("classic", {"lost_penalty": 200000.0, "monotonicity_power": 4.0,
                                 "monotonicity_weight": 47.0, "sum_power": 3.5,
                                 "sum_weight": 11.0, "merges_weight": 700.0,
                                 "empty_weight": 270.0}, depth=0)
SNAKE = PlayerSpec("snake", {"decay": 0.25, "tile_power": 1.0, "head_penalty": 1.0,
                             "empty_weight": 0.0}, depth=0)


def jobs() -> list[Job]:
    seeds = tuple(range(100, 111))
    return [Job(0, CLASSIC, seeds), Job(1, SNAKE, seeds)]


def test_serial_results_are_in_seed_order_and_count_progress():
    done = []
    results = SerialEvaluator(4).play(jobs(), done.append)
    assert [[r.seed for r in rs] for rs in results] == [list(range(100, 111))] * 2
    assert sum(done) == 22


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    # address="local": a fresh Ray of its own, never a cluster that happens to run here
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_a_jobs_rough_cpu_time_counts_its_games_at_their_depth_and_not_an_engines():
    jobs = [Job(0, PlayerSpec("classic", {}, depth=1), (1, 2, 3)),
            Job(1, PlayerSpec("snake", {}, depth=2), (1, 2))]
    assert rough_cpu_seconds_of_jobs(jobs) == pytest.approx(3 * UnitSize.rough_seconds(1)
                                                            + 2 * UnitSize.rough_seconds(2))
    engine = EnginePlayer(EngineCommand(("engine",), "."), "some-engine 1.0", {}, 1)
    assert rough_cpu_seconds_of_jobs([*jobs, Job(2, engine, (1,))]) is None  # its games: any length


@pytest.mark.ray
def test_ray_backend_matches_the_serial_backend(local_ray):
    serial = SerialEvaluator(3).play(jobs())
    evaluator = RayEvaluator(3)
    done = []
    on_ray = evaluator.play(jobs(), done.append)
    evaluator.close()
    assert local_ray.is_initialized()  # it joined an existing Ray, so it does not shut it down
    assert sum(done) == 22
    strip = [[(r.seed, r.score, r.moves, r.final_board, r.moves_evaluated) for r in rs]
             for rs in serial]
    assert strip == [[(r.seed, r.score, r.moves, r.final_board, r.moves_evaluated) for r in rs]
                     for rs in on_ray]


@pytest.mark.parametrize("dispatch", DISPATCHES)
@pytest.mark.ray
def test_a_raced_generation_on_ray_counts_the_games_the_serial_one_counts(local_ray, dispatch):
    """Units of one game, so that Ray's CPUs free up one by one and the pipelined dispatch
    speculates; whatever it played ahead, the same games count and the race ends the same."""
    levels = [30.0, 40.0, 47.0, 60.0, 700.0]
    race_jobs = [Job(i, PlayerSpec("classic", dict(CLASSIC.weights, monotonicity_weight=w),
                                   depth=0), tuple(range(200, 212)))
                 for i, w in enumerate(levels)]
    rank_weights = AdaptiveGames(2, 12, 2).rank_weights(1, len(levels))

    def generation(evaluator):
        schedule = GenerationGames(len(levels), range(200, 212), AdaptiveGames(2, 12, 2),
                                   rank_weights, lambda r: score_fitness(r, "mean_score"))
        results = evaluator.run(race_jobs, schedule)
        evaluator.close()
        return [[r.seed for r in rs] for rs in results], schedule.fits, schedule.rounds

    seeds, fits, rounds = generation(SerialEvaluator(SchedulePolicy(1, dispatch)))
    assert rounds > 1  # it raced
    assert generation(RayEvaluator(policy=SchedulePolicy(1, dispatch))) == (seeds, fits, rounds)


@pytest.mark.parametrize("backend", ["serial", pytest.param("ray", marks=pytest.mark.ray)])
def test_a_crash_in_a_game_names_candidate_seed_and_traceback(backend, request):
    bad = [Job(3, CLASSIC, (5, "not-a-seed", 6))]
    if backend == "ray":
        request.getfixturevalue("local_ray")
        evaluator = RayEvaluator(8)
    else:
        evaluator = SerialEvaluator(8)
    with pytest.raises(EvaluationError) as err:
        evaluator.play(bad)
    message = str(err.value)
    assert "candidate 3" in message and "'not-a-seed'" in message and "Traceback" in message


@pytest.mark.ray
def test_the_evaluator_says_what_it_joined_and_how_many_cpus_it_holds(local_ray):
    with RayEvaluator("auto") as evaluator:
        assert evaluator.describe() == "Ray: the Ray this process had already joined (1 node, 2 CPUs)"
    assert SerialEvaluator().describe() == "this process (1 CPU)"
