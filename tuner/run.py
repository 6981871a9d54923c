"""The tuning loop: ask the strategy for candidates, play their games, tell it the fitness,
checkpoint.

One generation: every candidate plays the generation's seeds (common random numbers), as many as
the budget says (``tuner.budget``: a fixed number, or a race that plays the candidates whose rank
is undecided more); the optional re-evaluation plays the best few again on fresh seeds; the
strategy is told the fitness; the state is checkpointed. Every ``validation.every`` generations
the strategy's best guess is played on the held-out validation seeds, for the history only. At
the end, the best candidates and the distribution mean are played on the validation seeds and the
winner becomes ``best.yaml``.
"""

from __future__ import annotations

import logging
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine import finite
from engine.atomic import atomic_write, remove_stale_temp_files
from engine.depth import to_yaml
from engine.families import get_family
from engine.families.registry import family_source_digest
from engine.heuristic import HeuristicError
from engine.solver import GameResult, PlayerSpec
from engine.stats import Z95, counted, readable, summarize
from engine.weights_file import WeightsFile, write_weights
from tuner import checkpoint as ckpt
from tuner import interrupts
from tuner.budget import AdaptiveGames, Budget
from tuner.checkpoint import Candidate, RunState
from tuner.config import AUTO, MAX_GAMES_AT_ONCE, MAX_POPSIZE, RunConfig, default_popsize
from tuner.errors import CheckpointError, ConfigError
from tuner.evaluation import Evaluator, Job
from tuner.fitness import FITNESSES, Fitness, score_fitness, within_noise
from tuner.progress import GameBar
from tuner.schedule import GenerationGames, auto_popsize
from tuner.seeds import reevaluation_seeds, training_seeds, validation_seeds
from tuner.space import SearchSpace
from tuner.strategies import Strategy, StrategyStateError, restore_strategy, strategy_for

log = logging.getLogger(__name__)

CMA_STOP_PREFIX = "cma-es termination: "  # RunState.cma_stop: this, then pycma's criteria


@dataclass
class Spent:
    """What a generation's training games cost: games, CPU-seconds (``cluster.csv``), and
    positions evaluated by their searches (``history.csv``'s ``positions``: the same on every
    machine, and fair between weights that play longer or shorter games)."""

    games: int = 0
    seconds: float = 0.0
    positions: int = 0

    def add(self, results: list[list[GameResult]]) -> None:
        for games in results:
            self.games += len(games)
            self.seconds += sum(r.seconds for r in games)
            self.positions += sum(r.moves_evaluated for r in games)


@dataclass(frozen=True)
class ValidationRow:
    """One candidate's result on the validation seeds."""

    label: str
    generation: int
    weights: dict[str, float]
    fitness: Fitness
    mean_score: float
    ci95: float
    reach: dict[int, float]


def popsize_for(config: RunConfig, cpus: int) -> int:
    """``cmaes.popsize`` as ``auto`` resolves it for ``cpus`` CPUs (``tuner.schedule.
    auto_popsize``), in multiples of the strategy's own (a population strategy's ``factor``)."""
    scale = config.strategy.kind.scale(config.strategy.settings)  # candidates per cmaes.popsize
    smallest = default_popsize(len(config.tuned))
    largest = max(smallest, min(MAX_POPSIZE, MAX_GAMES_AT_ONCE // (
        config.most_games * 2**config.cmaes.restarts)) // scale)
    candidates = auto_popsize(cpus, config.search.depth, config.most_games, smallest * scale,
                              largest * scale)
    return math.ceil(candidates / scale)


class TuningRun:
    """A run in a directory: create it fresh with ``start`` or continue it with ``resume``."""

    def __init__(self, config: RunConfig, run_dir: Path, state: RunState,
                 strategy: Strategy | None, progress: bool = True,
                 place: Callable[[], Path] | None = None):
        self.config = config
        self.run_dir = run_dir
        self.checkpointed = place is None and (run_dir / ckpt.CHECKPOINT_FILE).exists()
        self._place = place
        self.state = state
        self.strategy = strategy
        self.space = SearchSpace(config)
        self.progress = progress
        self.progress_file = None  # where the progress bars go; None: stderr
        self.evaluator: Evaluator | None = None
        self._generation_end: float | None = None  # perf_counter when the last one was measured
        self.stopped_on_request = False

    @classmethod
    def start(cls, config: RunConfig, run_dir: Path, progress: bool = True,
              strategy: Strategy | None = None,
              place: Callable[[], Path] | None = None) -> TuningRun:
        """A fresh run in ``run_dir``, with the strategy the config asks for unless one is
        given. ``place``: called once the first checkpoint is written, it moves the run to its
        final directory and returns it (``tuner.run_dir.NewRun.take_place``)."""
        if strategy is None and config.cmaes.popsize != AUTO:
            strategy = strategy_for(config, SearchSpace(config))
        state = RunState(config=config.resolved(), strategy=strategy.dumps() if strategy else b"",
                         family_digest=family_source_digest(config.family))
        ckpt.check_writable(run_dir)
        ckpt.write_config(run_dir, state.config)
        return cls(config, run_dir, state, strategy, progress, place)

    @classmethod
    def resume(cls, config: RunConfig, run_dir: Path, state: RunState,
               progress: bool = True, family_changed: bool = False) -> TuningRun:
        """The run in ``run_dir`` from its checkpoint ``state``. A family file or module edited
        since the run started is refused (the run would mix two heuristics) unless
        ``family_changed``; then the run goes on with the new code and records it."""
        digest = family_source_digest(config.family)
        if state.family_digest is not None and digest != state.family_digest:
            if not family_changed:
                raise CheckpointError(
                    f"{run_dir}: the code of family {config.family!r} changed since the run "
                    f"started, so its games would mix two heuristics: put the old code back, or "
                    f"resume with the new code anyway: tune resume {run_dir} --family-changed")
            log.warning("warning: family %r changed since the run started; resuming with the "
                        "new code (--family-changed)", config.family)
            state.family_digest = digest
        ckpt.check_writable(run_dir)
        for path in remove_stale_temp_files(run_dir):
            log.info("removed %s, left by an interrupted write", path)
        if state.config != config.resolved():  # an allowed change to a stop condition or to Ray
            state.config = config.resolved()
            ckpt.write_config(run_dir, state.config)
        try:
            strategy = restore_strategy(state.strategy, config)
        except StrategyStateError as err:
            raise CheckpointError(f"{run_dir / ckpt.CHECKPOINT_FILE}: {err}") from None
        return cls(config, run_dir, state, strategy, progress)

    # ----------------------------------------------------------------------------------------
    def run(self, evaluator: Evaluator) -> RunState:
        """Run generations until a stop condition, then validate. Returns the final state."""
        self.evaluator = evaluator
        if self.strategy is None:
            self.resolve_popsize(evaluator.workers)
        if self.state.generation:  # only a resumed run starts past generation 0
            log.info("%s", self.resume_line())
        self.state.finished = False
        self.stop_requested()  # a request left from an earlier job is not this one's
        while (reason := self.stop_reason()) is None:
            interrupts.check()
            self.step()
            if self.stop_requested():
                self.stopped_on_request = True
                self.state.stop_reason = "stopped on request (tune stop)"
                return self.state
        self.state.stop_reason = reason
        log.info("stopping: %s", reason)
        interrupts.check()
        rows = self.validate()
        with interrupts.deferred():
            self.write_validation(rows)
            self.state.finished = True
            self.checkpoint()
        self.stop_requested()  # asked while it validated: it has finished, and leaves no request
        return self.state

    def resolve_popsize(self, cpus: int) -> None:
        """``cmaes.popsize: auto``: the population for ``cpus`` CPUs (``tuner.schedule.
        auto_popsize``), chosen once, before the first generation, and written into the run's
        config, so that the run, resumed on any cluster, goes on with it."""
        popsize = popsize_for(self.config, cpus)
        self.config = self.config.with_popsize(popsize)
        self.state.config = self.config.resolved()
        ckpt.write_config(self.run_dir, self.state.config)
        self.strategy = strategy_for(self.config, self.space)
        self.state.strategy = self.strategy.dumps()
        log.info("cmaes.popsize auto: %s for %s (written into the run's %s)",
                 counted(popsize, "candidate"), counted(cpus, "CPU"), ckpt.CONFIG_FILE)

    def checkpoint(self) -> None:
        """Write the state; the first time, move the run to its final directory."""
        ckpt.save_state(self.run_dir, self.state)
        if self._place is not None:
            self.run_dir = self._place()
            self._place = None
        self.checkpointed = True

    def stop_requested(self) -> bool:
        """Whether ``tune stop`` asked this run to stop (``tuner.run_dir.request_stop``); the
        request is taken, so it stops one job only."""
        try:
            (self.run_dir / ckpt.STOP_FILE).unlink()
        except FileNotFoundError:
            return False
        return True

    def resume_line(self) -> str:
        """Where a resumed run stands: its name, generation and the games it has played."""
        s, limit = self.state, self.config.cmaes.max_generations
        of = f"of {limit:,}" if limit is not None else "(no generation limit)"
        return (f"resumed run {self.config.run.name} at generation {s.generation:,} {of}, "
                f"{counted(s.games, 'game')} so far")

    def stop_reason(self) -> str | None:
        c, s = self.config, self.state
        if c.cmaes.max_generations is not None and s.generation >= c.cmaes.max_generations:
            return f"reached max_generations ({c.cmaes.max_generations})"
        if c.cmaes.max_games is not None and s.games >= c.cmaes.max_games:
            return f"reached max_games ({c.cmaes.max_games})"
        return s.cma_stop or None

    def heuristic_problem(self, weights: dict[str, float]) -> str | None:
        """Why the search cannot use these weights (``engine.finite``), naming the weights to
        blame; None when it can. The config was checked at its initial point and at every
        box's ends, but weights at several ends at once can still overflow together."""
        family = get_family(self.config.family)
        vector = family.vector(weights)
        found = finite.diagnose(family, vector)
        if found is None:
            return None
        problem, blamed = found
        return (f"the heuristic is not finite ({problem})"
                f"{finite.caused_by(family, vector, blamed)}")

    def spec(self, weights: dict[str, float]) -> PlayerSpec:
        return self.config.player(weights)

    def play(self, weight_sets: list[dict[str, float]], seeds: list[list[int]], bar: GameBar):
        """Play each weight set on its list of seeds, counting the games on ``bar``."""
        jobs = [Job(i, self.spec(w), tuple(s)) for i, (w, s) in enumerate(zip(weight_sets, seeds))]
        return self.evaluator.play(jobs, bar.update)

    def bar(self, what: str, total: int, up_to: bool = False) -> GameBar:
        return GameBar(what, total, up_to=up_to, enabled=self.progress, file=self.progress_file)

    def generation_bar(self, generation: int, candidates: int, budget: Budget) -> GameBar:
        """One bar for all of a generation's games; under a race, its total is every candidate
        at ``max`` games (``tuner.progress``)."""
        racing = budget.first != budget.most
        reevaluated = min(self.config.evaluation.reevaluate_best, candidates)
        return self.bar(self.generation_label(generation) + (", round 1" if racing else ""),
                        (candidates + reevaluated) * budget.most, up_to=racing)

    def generation_label(self, generation: int) -> str:
        limit = self.config.cmaes.max_generations
        return f"gen {generation:,}" + (f" of {limit:,}" if limit is not None else "")

    def fitness(self, results) -> Fitness:
        evaluation = self.config.evaluation
        return score_fitness(results, evaluation.fitness, **evaluation.fitness_options)

    def play_generation(self, weight_sets: list[dict[str, float]], generation: int,
                        budget: Budget, bar: GameBar):
        """Every candidate's games and fitness under the budget: the first games for everyone,
        then rounds for the candidates the budget says are undecided, each on its next seeds
        (``tuner.schedule.GenerationGames``, dispatched as ``ray.dispatch`` says)."""
        seeds = training_seeds(self.config.run.seed, generation, budget.most)
        racing = isinstance(budget, AdaptiveGames)
        schedule = GenerationGames(len(weight_sets), seeds, budget,
                                   self.strategy.rank_weights() if racing else [],
                                   self.fitness, self.config.ray.dispatch)
        jobs = [Job(i, self.spec(w), tuple(seeds)) for i, w in enumerate(weight_sets)]
        rounds = 1

        def progress(games: int) -> None:
            nonlocal rounds
            bar.update(games)
            if schedule.rounds != rounds:
                rounds = schedule.rounds
                bar.set_description_str(f"{self.generation_label(generation)}, round {rounds}")

        results = self.evaluator.run(jobs, schedule, progress)
        return results, schedule.fits

    def play_and_score(self, weight_sets: list[dict[str, float]], generation: int,
                       budget: Budget, spent: Spent):
        """A generation's games and fitness, with the re-evaluation of its best if the config
        asks for it: results and fits; what the games cost goes to ``spent``."""
        c = self.config
        with self.generation_bar(generation, len(weight_sets), budget) as bar:
            results, fits = self.play_generation(weight_sets, generation, budget, bar)
            spent.add(results)
            if c.evaluation.reevaluate_best:  # fixed games only (config)
                best_first = sorted(range(len(weight_sets)), key=lambda i: -fits[i].value)
                top = best_first[: c.evaluation.reevaluate_best]
                count = budget.most
                again = self.play([weight_sets[i] for i in top],
                                  [reevaluation_seeds(c.run.seed, generation, count)] * len(top),
                                  bar)
                pool = FITNESSES[c.evaluation.fitness].pool
                for i, r in zip(top, again):
                    fits[i] = pool(results[i], r, **c.evaluation.fitness_options)
                spent.add(again)
        return results, fits

    def weights_refused(self, weight_sets: list[dict[str, float]], generation: int,
                        refused: HeuristicError) -> ConfigError:
        """The error for a generation holding weights the family cannot take. The engine checks
        every table it builds, so a candidate's player refuses them where it is built (on a
        worker, in parallel, instead of a serial check of every candidate here); then the
        first such candidate in order is named, with the weights to blame."""
        for i, weights in enumerate(weight_sets):
            problem = self.heuristic_problem(weights)
            if problem is not None:
                where = f"candidate {i}: {problem}"
                break
        else:
            where = str(refused)
        return ConfigError(
            f"{self.config.source}: params: generation {generation}, {where}; the boxes hold "
            "weights the family cannot take together, and resuming would draw them again: "
            "narrow the boxes and start a new run")

    def step(self) -> None:
        """One generation, checkpointed when it completes."""
        c, s = self.config, self.state
        started = time.perf_counter()
        generation = s.generation + 1
        xs = self.strategy.ask()
        budget = self.strategy.budget()
        weight_sets = [self.space.weights(x) for x in xs]
        spent = Spent()
        try:
            results, fits = self.play_and_score(weight_sets, generation, budget, spent)
        except HeuristicError as refused:  # where a player was built: a worker, or here
            raise self.weights_refused(weight_sets, generation, refused) from None
        played = [len(r) for r in results]
        for i, (w, f) in enumerate(zip(weight_sets, fits)):
            log.debug("gen %d candidate %d: fitness %s +/- %s (95%% CI) over %s, weights %s",
                      generation, i, readable(f.value), readable(Z95 * f.stderr),
                      counted(f.games, "game"), w)
        self.strategy.tell(xs, [f.value for f in fits])
        if looked_at := self.strategy.second_look():
            self.second_look(weight_sets, looked_at, generation, budget.most, spent)
        # the strategy that produced this generation, before an IPOP restart replaces it
        diagnostics = self.strategy.diagnostics()
        cma_stop = self.strategy.termination()

        s.generation = generation
        s.games += spent.games
        s.evaluations += len(xs)
        s.seconds += time.perf_counter() - started
        if cma_stop:
            s.cma_stop = CMA_STOP_PREFIX + ", ".join(sorted(cma_stop))
        self.update_elites(xs, weight_sets, fits, generation)
        order = sorted(range(len(xs)), key=lambda i: -fits[i].value)
        best, worst = fits[order[0]], fits[order[-1]]
        row = {
            "generation": generation,
            "evaluations": s.evaluations,
            "games": s.games,
            "best": best.value,
            "best_stderr": best.stderr,
            "median": statistics.median(f.value for f in fits),
            "worst": worst.value,
            **diagnostics,
            "popsize": len(xs),
            "within_noise": within_noise(best, worst),
            "games_min": min(played),
            "games_mean": statistics.fmean(played),
            "games_max": max(played),
            "games_saved": len(xs) * budget.most - sum(played),
            "positions": spent.positions,
        }
        row.update({f"best_{k}": v for k, v in weight_sets[order[0]].items()
                    if k in {p.name for p in c.tuned}})
        if c.validation.every and generation % c.validation.every == 0:
            row.update(self.validate_best_guess())
        machines = self.machine_row(generation, spent.seconds, started)
        with interrupts.deferred():
            s.history.append(row)
            s.cluster = (*s.cluster, machines)
            s.strategy = self.strategy.dumps()
            self.write_best_so_far()
            self.checkpoint()
            self.log_generation(row, machines, spent.games, time.perf_counter() - started,
                                racing=budget.first != budget.most)

    def second_look(self, weight_sets: list[dict[str, float]], looked_at: list[int],
                    generation: int, count: int, spent: Spent) -> None:
        """The candidates the strategy looks at again, on the generation's re-evaluation seeds
        (never a training or validation seed), ``count`` games each; their fitness goes back to
        the strategy, what their games cost to ``spent``."""
        seeds = reevaluation_seeds(self.config.run.seed, generation, count)
        with self.bar(f"{self.generation_label(generation)}: second look",
                      len(looked_at) * count) as bar:
            results = self.play([weight_sets[i] for i in looked_at], [seeds] * len(looked_at),
                                bar)
        self.strategy.looked_again([self.fitness(r).value for r in results])
        spent.add(results)

    def machine_row(self, generation: int, game_seconds: float, started: float) -> dict:
        """What the machines did for ``generation`` (``cluster.csv``): the CPUs available at
        its end, its wall time since the last generation was measured (so the driver's work
        between generations counts), and the share of the CPUs' time its training games took."""
        now = time.perf_counter()
        seconds = now - (self._generation_end or started)
        self._generation_end = now
        cpus = self.evaluator.workers
        return {"generation": generation, "cpus": cpus, "seconds": round(seconds, 6),
                "game_seconds": round(game_seconds, 6),
                "share": round(game_seconds / (cpus * seconds), 4) if seconds > 0 else 0.0}

    def validate_best_guess(self) -> dict[str, float]:
        """The strategy's best guess played on the validation seeds, for the history: what
        the run has found so far, measured on games it never trains on."""
        weights = self.space.weights(self.strategy.mean)
        if self.heuristic_problem(weights) is not None:
            return {}
        seeds = validation_seeds(self.config.run.seed, self.config.validation.games)
        with self.bar(f"gen {self.state.generation:,}: validating the best guess",
                      len(seeds)) as bar:
            [results] = self.play([weights], [seeds], bar)
        fit = self.fitness(results)
        return {"validated": fit.value, "validated_stderr": fit.stderr}

    def update_elites(self, xs, weight_sets, fits, generation) -> None:
        pool = self.state.elites + [
            Candidate([float(v) for v in x], w, f.value, f.stderr, f.games, generation)
            for x, w, f in zip(xs, weight_sets, fits)
        ]
        pool.sort(key=lambda cand: -cand.fitness)
        self.state.elites = pool[: self.config.validation.top_k]

    def write_best_so_far(self) -> None:
        top = self.state.elites[0]
        provenance = {
            "status": "in progress: best training fitness so far (not yet validated)",
            "run": self.config.run.name,
            "generation": top.generation,
            "fitness": self.config.evaluation.fitness,
            "training_fitness": top.fitness,
            "training_stderr": top.stderr,
            "training_games": top.games,
        }
        self.write_weights(top.weights, provenance)

    def write_weights(self, weights: dict[str, float], provenance: dict) -> None:
        write_weights(
            self.run_dir / ckpt.BEST_FILE,
            WeightsFile(self.config.family, weights, self.config.search.depth, provenance),
        )

    def log_generation(self, row: dict, machines: dict, games: int, seconds: float,
                       racing: bool) -> None:
        """One line per generation; its +/- is a 95% confidence interval, as everywhere a
        person reads one (``history.csv`` keeps the standard error). It gives the CPUs and
        the share of their time spent on training games (``cluster.csv``)."""
        c, s = self.config, self.state
        rate = games / seconds if seconds > 0 else math.inf
        per_generation = s.seconds / s.generation
        remaining = []
        if c.cmaes.max_generations is not None:
            remaining.append((c.cmaes.max_generations - s.generation) * per_generation)
        if c.cmaes.max_games is not None:
            remaining.append(max(c.cmaes.max_games - s.games, 0) / max(rate, 1e-9))
        eta = _clock(min(remaining)) if remaining else "?"
        noise = "  (differences within noise)" if row["within_noise"] else ""
        spent = ""
        if racing:
            spent = (f"  games {row['games_min']:,}-{row['games_max']:,} per candidate (mean "
                     f"{row['games_mean']:,.0f}, {row['games_saved']:,} saved)")
        validated = ""
        if "validated" in row:
            validated = (f"  validated {readable(row['validated'])} +/- "
                         f"{readable(Z95 * row['validated_stderr'])}")
        log.info(
            "%s  evals %s  best %s +/- %s (95%% CI)  median %s  worst %s  sigma %s%s%s  "
            "%s games/s  %s, %.0f%% on games  elapsed %s  ETA %s%s",
            self.generation_label(row["generation"]), f"{row['evaluations']:,}",
            readable(row["best"]), readable(Z95 * row["best_stderr"]), readable(row["median"]),
            readable(row["worst"]), readable(row["sigma"], 3), spent, validated,
            readable(rate, 3), counted(machines["cpus"], "CPU"), 100 * machines["share"],
            _clock(s.seconds), eta, noise,
        )

    # ----------------------------------------------------------------------------------------
    def validate(self) -> list[ValidationRow]:
        """Play the elites and the distribution mean on the validation seeds."""
        c = self.config
        candidates = [(f"elite {i + 1}", e.generation, e.weights)
                      for i, e in enumerate(self.state.elites)]
        mean = self.space.weights(self.strategy.mean)
        problem = self.heuristic_problem(mean)
        if problem is None:
            candidates.append(("distribution mean", self.state.generation, mean))
        else:
            log.warning("validation: the distribution mean is left out: %s", problem)
        seeds = validation_seeds(c.run.seed, c.validation.games)
        with self.bar("validation", len(seeds) * len(candidates)) as bar:
            results = self.play([w for _, _, w in candidates], [seeds] * len(candidates), bar)
        rows = []
        for (label, generation, weights), games in zip(candidates, results):
            summary = summarize(games)
            rows.append(ValidationRow(label, generation, weights, self.fitness(games),
                                      summary.mean, summary.ci95, summary.reach))
        return rows

    def write_validation(self, rows: list[ValidationRow]) -> None:
        """Keep the validation winner as the run's best weights, with the table beside it."""
        c = self.config
        winner = max(rows, key=lambda r: r.fitness.value)
        log.info("validation on %s each (+/-: 95%% confidence interval)",
                 counted(c.validation.games, "held-out game"))
        for r in rows:
            score = ("" if c.evaluation.fitness == "mean_score" else
                     f"  mean score {readable(r.mean_score)} +/- {readable(r.ci95)}")
            log.info("validation  %-18s gen %3d  %s %s +/- %s%s%s", r.label, r.generation,
                     c.evaluation.fitness.replace("_", " "), readable(r.fitness.value),
                     readable(Z95 * r.fitness.stderr), score,
                     "  <- winner" if r is winner else "")
        for line in self.space.edge_warnings(winner.weights):
            log.warning("warning: %s", line)
        atomic_write(self.run_dir / ckpt.VALIDATION_FILE, validation_csv(rows))
        provenance = {
            "status": "validated",
            "run": c.run.name,
            "candidate": winner.label,
            "generation": winner.generation,
            "fitness": c.evaluation.fitness,
            "validation_fitness": winner.fitness.value,
            "validation_stderr": winner.fitness.stderr,
            "validation_mean_score": winner.mean_score,
            "validation_ci95": [winner.mean_score - winner.ci95, winner.mean_score + winner.ci95],
            "validation_games": c.validation.games,
            "depth": to_yaml(c.search.depth),
            "cutoff": c.search.cutoff,
            "generations": self.state.generation,
            "training_games": self.state.games,
            "config": self.state.config,
        }
        self.write_weights(winner.weights, provenance)


def validation_csv(rows: list[ValidationRow]) -> str:
    table = [
        {
            "candidate": r.label,
            "generation": r.generation,
            "fitness": r.fitness.value,
            "fitness_stderr": r.fitness.stderr,
            "mean_score": r.mean_score,
            "ci95": r.ci95,
            **{f"reach_{t}": share for t, share in r.reach.items()},
            **{f"w_{k}": v for k, v in r.weights.items()},
        }
        for r in rows
    ]
    return ckpt.rows_csv(table)


def _clock(seconds: float) -> str:
    seconds = round(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"

