"""The normalised search space: CMA-ES sees each tuned parameter mapped onto [0, 1].

Linear parameters map ``low..high`` linearly, log parameters map ``log(low)..log(high)``, so one
sigma is a comparable step for every parameter whatever its units; fixed parameters never reach
CMA-ES. This is the only place that converts between the two spaces.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

EDGE_MARGIN = 0.05  # the last 5% of a box, in normalised units, counts as its edge


@dataclass(frozen=True)
class ParamSpec:
    """How one family parameter is treated: fixed at a value, or tuned within bounds."""

    name: str
    init: float
    low: float
    high: float
    scale: str = "linear"
    tuned: bool = True


class SearchSpace:
    """Converts between CMA-ES's normalised vectors and named family weights: ``params`` are
    the family's parameters in its order (a config's ``params``), tuned and fixed."""

    def __init__(self, params: Sequence[ParamSpec]):
        self.params = tuple(params)
        self.tuned = tuple(p for p in self.params if p.tuned)

    @property
    def dimension(self) -> int:
        return len(self.tuned)

    def initial(self) -> np.ndarray:
        return np.array([_to_unit(p, p.init) for p in self.tuned])

    def weights(self, x) -> dict[str, float]:
        """Full named weights for a normalised vector (fixed parameters filled in)."""
        tuned = {p.name: _from_unit(p, float(v)) for p, v in zip(self.tuned, x, strict=True)}
        return {p.name: tuned.get(p.name, p.init) for p in self.params}

    def point(self, weights: dict[str, float]) -> np.ndarray:
        """The normalised vector of named weights (the inverse of ``weights`` inside the box)."""
        return np.array([_to_unit(p, weights[p.name]) for p in self.tuned])

    def edge_warnings(self, weights: dict[str, float], margin: float = EDGE_MARGIN) -> list[str]:
        """One line per tuned weight within ``margin`` (normalised) of an end of its box.

        A winner there may have been stopped by the box rather than by the heuristic (the first
        snake run in ``docs/studies/campaigns.md`` was), so the end of a run and ``tune report``
        say so.
        Values outside the box (a hand-edited ``best.yaml``) count as at its nearer end.
        """
        lines = []
        for p in self.tuned:
            value = weights[p.name]
            u = _to_unit(p, value) if p.scale == "linear" or value > 0 else -math.inf
            if u <= margin or u >= 1.0 - margin:
                end, bound = ("lower", p.low) if u <= margin else ("upper", p.high)
                lines.append(f"{p.name} = {value:.4g} is at the {end} end of its box "
                             f"({bound:g}); the box may be what stopped it: widen it and tune again")
        return lines


def box_problem(low: float, high: float, scale: str) -> str | None:
    """Why ``[low, high]`` cannot be mapped onto [0, 1]: its width (or, on a log scale, its
    width in logarithms) must be a finite, non-zero float. None when it can. A config refuses
    such a box when it is read (``tuner.config``)."""
    if scale == "log":
        if low <= 0:
            return f"a log-scale parameter needs low > 0, got {low}"
        width = math.log(high) - math.log(low)
    else:
        width = high - low
    if not math.isfinite(width):
        return f"the box [{low:g}, {high:g}] is too wide: its width overflows a float; narrow it"
    if width <= 0:
        return f"the box [{low:g}, {high:g}] is too narrow to map onto [0, 1]"
    return None


def _to_unit(p: ParamSpec, value: float) -> float:
    if p.scale == "log":
        return (math.log(value) - math.log(p.low)) / (math.log(p.high) - math.log(p.low))
    return (value - p.low) / (p.high - p.low)


def _from_unit(p: ParamSpec, u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    if p.scale == "log":
        return math.exp(math.log(p.low) + u * (math.log(p.high) - math.log(p.low)))
    return p.low + u * (p.high - p.low)
