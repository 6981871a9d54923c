"""The end of a run: the elites and the distribution mean played on the held-out validation
seeds; the winner by validation fitness becomes the run's best weights. A reference
(``validation.reference``: the initial point or a baseline) plays the same seeds, last, as the
mark the gain is judged against; it never wins."""

from __future__ import annotations

import logging

from engine.baselines import baseline_path
from engine.stats import summarize
from engine.weights_file import read_weights
from tuner.config.sections import START
from tuner.games.seeds import validation_seeds
from tuner.loop.record import ValidationRow
from tuner.loop.step import Games
from tuner.space import SearchSpace
from tuner.store.checkpoint import RunState

log = logging.getLogger("tuner.loop.run")


def validate(games: Games, space: SearchSpace, state: RunState,
             mean: list[float]) -> tuple[list[ValidationRow], ValidationRow]:
    """Every elite of ``state``, the strategy's ``mean`` (unless the search cannot use it) and
    the reference, if any, on the validation seeds: their rows, and the winner (never the
    reference)."""
    candidates = [(f"elite {i + 1}", e.generation, e.weights) for i, e in enumerate(state.elites)]
    weights = space.weights(mean)
    problem = games.heuristic_problem(weights)
    if problem is None:
        candidates.append(("distribution mean", state.generation, weights))
    else:
        log.warning("validation: the distribution mean is left out: %s", problem)
    contenders = len(candidates)
    reference = games.config.validation.reference
    if reference is not None:
        candidates.append((games.config.validation.reference_label, 0,
                           reference_weights(reference, space)))
    seeds = validation_seeds(games.config.run.seed, games.config.validation.games)
    results = games.play("validation", [w for _, _, w in candidates], seeds)
    rows = []
    for (label, generation, weights), played in zip(candidates, results):
        summary = summarize(played)
        rows.append(ValidationRow(label, generation, weights, games.fitness(played),
                                  summary.mean, summary.ci95, summary.reach))
    return rows, max(rows[:contenders], key=lambda r: r.fitness.value)


def reference_weights(reference: str, space: SearchSpace) -> dict[str, float]:
    """The weights ``validation.reference`` names: the initial point, or a baseline's."""
    if reference == START:
        return space.weights(space.initial())
    return read_weights(baseline_path(reference)).weights
