"""pycma, imported on first use and without matplotlib, and what a race reads of it: how much
CMA-ES counts each rank of a generation (``tuner.games.budget``)."""

from __future__ import annotations

import math
import sys
import warnings
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import ModuleType


def pycma() -> ModuleType:
    """pycma, imported on first use only, and without matplotlib: pycma loads pyplot as it
    imports, for plotting of its own that we never use, and that took 0.6 to 1.4 s of every
    run's start here (reading a config needs neither). Where this process has loaded
    matplotlib already, pycma finds it as usual."""
    if "cma" in sys.modules:
        return sys.modules["cma"]
    kept_out = "matplotlib" not in sys.modules
    if kept_out:
        sys.modules["matplotlib"] = None  # pycma's `from matplotlib import pyplot` fails at once
    try:
        with warnings.catch_warnings():
            # the warning pycma gives where it finds no matplotlib, about its plotting
            warnings.filterwarnings("ignore", "Could not import matplotlib", UserWarning,
                                    r"cma\.")
            import cma  # on first use: see above
    finally:
        if kept_out:
            del sys.modules["matplotlib"]  # a later import finds the real one
    return cma


@cache
def rank_weights(dimension: int, popsize: int) -> tuple[float, ...]:
    """pycma's recombination weights for ``popsize`` candidates in ``dimension`` tuned
    parameters, best rank first: positive for the best half (the mean and the covariance),
    negative for the rest (active CMA: the covariance only). They depend on nothing else, so a
    fresh CMA-ES of that size gives those of any running one."""
    es = pycma().CMAEvolutionStrategy(dimension * [0.5], 0.5, {
        "popsize": popsize, "verbose": -9, "seed": math.nan})  # nan: numpy's global state untouched
    return tuple(float(w) for w in es.sp.weights)
