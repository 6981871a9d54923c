"""One generation: ask the strategy for candidates, play their games, tell it the fitness, and
return a record of what happened.

Every candidate plays the generation's seeds (common random numbers), as many as the run's
budget says (``evaluation.games``, ``tuner.games.budget``: a fixed number, or a race that plays
the candidates whose rank is undecided more); the strategy is told the fitness. The step updates
the run's state in memory (its counters, elites, history row, strategy bytes); writing anything
is the observers' job (``tuner.loop.observers``).
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable

from engine import finite
from engine.external.player import EnginePlayer
from engine.families import get_family
from engine.heuristic import HeuristicError
from engine.solver import GameResult, PlayerSpec
from tuner import interrupts
from tuner.config import RunConfig
from tuner.errors import ConfigError
from tuner.games import throughput
from tuner.games.budget import Budget
from tuner.games.evaluation import Evaluator, Job
from tuner.games.fitness import Fitness, score_fitness, within_noise
from tuner.games.kept import KeptGames
from tuner.games.schedule import AllGames, GenerationGames, Schedule
from tuner.games.seeds import training_seeds, validation_seeds
from tuner.loop.observers import Observers, generation_label
from tuner.loop.record import GenerationRecord, Spent
from tuner.space import SearchSpace
from tuner.store.checkpoint import Candidate, RunState
from tuner.strategies import Result, Strategy

CMA_STOP_PREFIX = "cma-es termination: "  # RunState.cma_stop: this, then pycma's criteria


class Games:
    """Playing weight sets for the run: players as the config builds them, counted by the
    observers' progress, each phase named for them; the games finished since the last
    checkpoint kept (``kept``, ``tuner.games.kept``), so that a resume does not play them
    again."""

    def __init__(self, config: RunConfig, evaluator: Evaluator, observers: Observers,
                 kept: KeptGames | None = None):
        self.config = config
        self.evaluator = evaluator
        self.observers = observers
        self.kept = kept

    def spec(self, weights: dict[str, float]) -> PlayerSpec | EnginePlayer:
        """The player of ``weights``' games."""
        return self.config.player(weights)

    def training_seeds(self, generation: int, count: int) -> list[int]:
        """The seeds a generation's candidates play."""
        return training_seeds(self.config.run.seed, generation, count)

    def fitness(self, results: list[GameResult]) -> Fitness:
        """The config's fitness of a candidate's games."""
        evaluation = self.config.evaluation
        return score_fitness(results, evaluation.fitness, **evaluation.fitness_options)

    def play(self, label: str, weight_sets: list[dict[str, float]], seeds: list[int]):
        """Each weight set on ``seeds``, as one phase of games named ``label``."""
        jobs = [Job(i, self.spec(w), tuple(seeds)) for i, w in enumerate(weight_sets)]
        with self.observers.games(label, len(seeds) * len(weight_sets)):
            return self.run(jobs, AllGames([job.seeds for job in jobs]),
                            self.observers.games_played)

    def run(self, jobs: list[Job], schedule: Schedule, progress: Callable[[int], None]):
        """``schedule``'s games of ``jobs`` on the evaluator, those kept answered from the
        kept games and the others kept as they come back (written out by the end, or as it
        fails)."""
        if self.kept is None:
            return self.evaluator.run(jobs, schedule, progress)
        try:
            results = self.evaluator.run(
                jobs, self.kept.schedule(jobs, schedule, self.observers.games_found), progress)
        except BaseException:
            with contextlib.suppress(OSError):  # the failure is what is reported
                self.kept.flush()
            raise
        self.kept.flush()
        return results

    def label(self, generation: int) -> str:
        return generation_label(self.config, generation)

    def heuristic_problem(self, weights: dict[str, float]) -> str | None:
        """Why the search cannot use these weights (``engine.finite``), naming the weights to
        blame; None when it can. The config was checked at its initial point and at every
        box's ends, but weights at several ends at once can still overflow together. An
        external engine's weights are the engine's to judge."""
        if self.config.family is None:
            return None
        family = get_family(self.config.family)
        vector = family.vector(weights)
        found = finite.diagnose(family, vector)
        if found is None:
            return None
        problem, blamed = found
        return (f"the heuristic is not finite ({problem})"
                f"{finite.caused_by(family, vector, blamed)}")


class GenerationStep:
    """Runs one generation of ``strategy`` on ``games`` and updates ``state``; returns its
    record. ``clock``: when the previous generation was measured (``cluster.csv`` counts the
    driver's work between generations)."""

    def __init__(self, config: RunConfig, space: SearchSpace, strategy: Strategy, games: Games):
        self.config = config
        self.space = space
        self.strategy = strategy
        self.games = games
        self.clock: float | None = None

    def __call__(self, state: RunState) -> GenerationRecord:
        c = self.config
        started = time.perf_counter()
        generation = state.generation + 1
        xs = self.strategy.ask()
        budget = c.evaluation.games
        weight_sets = [self.space.weights(x) for x in xs]
        spent = Spent()
        try:
            results, fits = self.play_and_score(weight_sets, generation, budget, spent)
        except HeuristicError as refused:  # where a player was built: a worker, or here
            raise self.weights_refused(weight_sets, generation, refused) from None
        played = [len(r) for r in results]
        self.strategy.tell(xs, [f.value for f in fits])
        # the strategy that produced this generation, before an IPOP restart replaces it
        result = self.strategy.result
        cma_stop = self.strategy.stop()

        elapsed = time.perf_counter() - started
        extra = {}
        if c.validation.every and generation % c.validation.every == 0:
            extra = self.validate_best_guess(generation)
        machines = self.machine_row(generation, spent.seconds, started, spent.seconds_here)
        with interrupts.deferred():  # the state and what observers write from it, as one
            state.generation = generation
            state.games += spent.games
            state.evaluations += len(xs)
            state.seconds += elapsed
            if cma_stop:
                state.cma_stop = CMA_STOP_PREFIX + ", ".join(sorted(cma_stop))
            self.update_elites(state, xs, weight_sets, fits, generation)
            row = self.history_row(state, weight_sets, fits, played, budget, spent, result)
            row.update(extra)
            state.history.append(row)
            state.cluster = (*state.cluster, machines)
            state.strategy = self.strategy.dumps()
            record = GenerationRecord(generation, weight_sets, fits, played, spent, row,
                                      machines, time.perf_counter() - started,
                                      budget.first != budget.most)
            self.games.observers.generation_ended(record, state)
        return record

    def play_and_score(self, weight_sets: list[dict[str, float]], generation: int,
                       budget: Budget, spent: Spent):
        """A generation's games and fitness, as one phase of games (under a race, its total is
        every candidate at ``max`` games): results and fits; what the games cost goes to
        ``spent``, with those of them kept from an earlier sitting, which took none of this
        sitting's time."""
        games, kept = self.games, self.games.kept
        racing = budget.first != budget.most
        answered = (kept.answered, kept.answered_seconds) if kept else (0, 0.0)
        with games.observers.games(games.label(generation) + (", round 1" if racing else ""),
                                   len(weight_sets) * budget.most, up_to=racing):
            results, fits = self.play_generation(weight_sets, generation, budget)
            spent.add(results)
        if kept:
            spent.kept = kept.answered - answered[0]
            spent.kept_seconds = kept.answered_seconds - answered[1]
        return results, fits

    def play_generation(self, weight_sets: list[dict[str, float]], generation: int,
                        budget: Budget):
        """Every candidate's games and fitness under the budget: the first games for everyone,
        then rounds for the candidates the budget says are undecided, each on its next seeds
        (``tuner.games.schedule.GenerationGames``, dispatched as the evaluator's policy says)."""
        games = self.games
        seeds = games.training_seeds(generation, budget.most)
        rank_weights = budget.rank_weights(self.space.dimension, len(weight_sets))
        schedule = GenerationGames(len(weight_sets), seeds, budget, rank_weights, games.fitness)
        jobs = [Job(i, games.spec(w), tuple(seeds)) for i, w in enumerate(weight_sets)]
        rounds = 1

        def progress(count: int) -> None:
            nonlocal rounds
            games.observers.games_played(count)
            if schedule.rounds != rounds:
                rounds = schedule.rounds
                games.observers.games_renamed(f"{games.label(generation)}, round {rounds}")

        results = games.run(jobs, schedule, progress)
        return results, schedule.fits

    def weights_refused(self, weight_sets: list[dict[str, float]], generation: int,
                        refused: HeuristicError) -> ConfigError:
        """The error for a generation holding weights the family cannot take. The engine checks
        every table it builds, so a candidate's player refuses them where it is built (on a
        worker, in parallel, instead of a serial check of every candidate here); then the
        first such candidate in order is named, with the weights to blame."""
        for i, weights in enumerate(weight_sets):
            problem = self.games.heuristic_problem(weights)
            if problem is not None:
                where = f"candidate {i}: {problem}"
                break
        else:
            where = str(refused)
        return ConfigError(
            f"{self.config.source}: params: generation {generation}, {where}; the boxes hold "
            "weights the family cannot take together, and resuming would draw them again: "
            "narrow the boxes and start a new run")

    def history_row(self, state: RunState, weight_sets, fits: list[Fitness], played: list[int],
                    budget: Budget, spent: Spent, result: Result) -> dict:
        """The generation's ``history.csv`` row (``result``: the strategy's, as of this
        generation)."""
        order = sorted(range(len(fits)), key=lambda i: -fits[i].value)
        best, worst = fits[order[0]], fits[order[-1]]
        tuned = {p.name for p in self.config.tuned}
        return {
            "generation": state.generation,
            "evaluations": state.evaluations,
            "games": state.games,
            "best": best.value,
            "best_stderr": best.stderr,
            "median": statistics.median(f.value for f in fits),
            "worst": worst.value,
            "sigma": result.sigma,
            "restart": result.restart,
            "popsize": len(fits),
            "within_noise": within_noise(best, worst),
            "games_min": min(played),
            "games_mean": statistics.fmean(played),
            "games_max": max(played),
            "games_saved": len(fits) * budget.most - sum(played),
            "positions": spent.positions,
            **{f"best_{k}": v for k, v in weight_sets[order[0]].items() if k in tuned},
        }

    def machine_row(self, generation: int, game_seconds: float, started: float,
                    seconds_here: float | None = None) -> dict:
        """What the machines did for ``generation`` (``cluster.csv``): the CPUs available at
        its end, its wall time since the last generation was measured (so the driver's work
        between generations counts), the CPU-seconds its CPUs were present in that time (nodes
        join and leave), and the share of those its training games took (``seconds_here``: of
        ``game_seconds``, those played in that time, not kept from an earlier sitting)."""
        now = time.perf_counter()
        since = self.clock or started
        self.clock = now
        evaluator = self.games.evaluator
        present = evaluator.cpu_seconds(since, now)
        return {"generation": generation, "cpus": evaluator.workers,
                "seconds": round(now - since, 6), "game_seconds": round(game_seconds, 6),
                "share": round(throughput.share(
                    game_seconds if seconds_here is None else seconds_here, present), 4),
                "cpu_seconds": round(present, 6)}

    def validate_best_guess(self, generation: int) -> dict[str, float]:
        """The strategy's best guess played on the validation seeds, for the history: what
        the run has found so far, measured on games it never trains on."""
        weights = self.space.weights(self.strategy.result.mean)
        if self.games.heuristic_problem(weights) is not None:
            return {}
        seeds = validation_seeds(self.config.run.seed, self.config.validation.games)
        [results] = self.games.play(f"gen {generation:,}: validating the best guess",
                                    [weights], seeds)
        fit = self.games.fitness(results)
        return {"validated": fit.value, "validated_stderr": fit.stderr}

    def update_elites(self, state: RunState, xs, weight_sets, fits, generation) -> None:
        pool = state.elites + [
            Candidate([float(v) for v in x], w, f.value, f.stderr, f.games, generation)
            for x, w, f in zip(xs, weight_sets, fits)
        ]
        pool.sort(key=lambda cand: -cand.fitness)
        state.elites = pool[: self.config.validation.top_k]

