"""The end of a run: the elites and the distribution mean played on the held-out validation
seeds; the winner by validation fitness becomes the run's best weights. The start (the initial
point: ``validation.start``, on by default) plays the same seeds, so that each candidate's gain
over it is paired game by game and a report can say whether tuning beat it; a baseline named as
``validation.reference`` plays them too, last. Neither ever wins."""

from __future__ import annotations

import logging

from engine.baselines import baseline_path
from engine.stats import summarize
from engine.weights_file import read_weights
from tuner.config.sections import START
from tuner.games.fitness import paired_difference
from tuner.games.seeds import validation_seeds
from tuner.loop.record import ValidationRow
from tuner.loop.step import Games
from tuner.space import SearchSpace
from tuner.store.checkpoint import RunState

log = logging.getLogger("tuner.loop.run")


def validate(games: Games, space: SearchSpace, state: RunState,
             mean: list[float]) -> tuple[list[ValidationRow], ValidationRow]:
    """Every elite of ``state``, the strategy's ``mean`` (unless the search cannot use it), the
    start and the baseline reference, as the config asks, on the validation seeds: their rows,
    and the winner (never the start nor the reference)."""
    candidates = [(f"elite {i + 1}", e.generation, e.weights) for i, e in enumerate(state.elites)]
    weights = space.weights(mean)
    problem = games.heuristic_problem(weights)
    if problem is None:
        candidates.append(("distribution mean", state.generation, weights))
    else:
        log.warning("validation: the distribution mean is left out: %s", problem)
    contenders = len(candidates)
    section = games.config.validation
    if section.validates_start:
        candidates.append((START, 0, space.weights(space.initial())))
    if section.reference not in (None, START):
        candidates.append((section.reference_label, 0,
                           read_weights(baseline_path(section.reference)).weights))
    seeds = validation_seeds(games.config.run.seed, section.games)
    results = games.play("validation", [w for _, _, w in candidates], seeds)
    start = results[contenders] if section.validates_start else None
    evaluation = games.config.evaluation
    rows = []
    for (label, generation, weights), played in zip(candidates, results):
        summary = summarize(played)
        gain = None if start is None else paired_difference(
            played, start, evaluation.fitness, **evaluation.fitness_options)
        rows.append(ValidationRow(label, generation, weights, games.fitness(played),
                                  summary.mean, summary.ci95, summary.reach, gain))
    return rows, max(rows[:contenders], key=lambda r: r.fitness.value)
