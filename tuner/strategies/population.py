"""``population``: a larger population, each candidate on few games.

CMA-ES moves its mean by a weighted average over the best half of the population, so the noise of
each candidate's fitness is averaged over more candidates as the population grows (the
population-size analyses of CMA-ES under noise: Hansen; Arnold and Beyer). ``factor`` times the
population CMA-ES would use (``cmaes.popsize``, or pycma's default), every candidate on
``evaluation.games`` games, typically a few.
"""

from __future__ import annotations

from tuner.strategies.base import StrategyKind
from tuner.strategies.pycma_es import CMAESStrategy, cmaes_for

MAX_FACTOR = 100


def read(check, section) -> dict:
    return {"factor": check.integer(section, "factor", "strategy", default=4, low=2,
                                    high=MAX_FACTOR)}


def create(settings, shared, space) -> CMAESStrategy:
    popsize = shared.population(space.dimension, settings["factor"])
    return CMAESStrategy("population", cmaes_for(shared, space, popsize))


KIND = StrategyKind(
    name="population",
    summary="CMA-ES with factor x its population, every candidate on evaluation.games games",
    games="number",
    create=create,
    load=CMAESStrategy.loads,
    keys=("factor",),
    read=read,
    factor="factor",
)
