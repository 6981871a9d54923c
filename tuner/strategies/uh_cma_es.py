"""``uh-cma-es``: CMA-ES with uncertainty handling (UH-CMA-ES: Hansen, Niederberger, Guzzella and
Koumoutsakos, 2009).

After each generation a few of its candidates play again, on fresh seeds and as many games as
before. Where their ranks within the generation moved more than a noise-free fitness would let
them, noise decides the ranking: the step size grows (the candidates spread further apart than the
noise) and so do the games per candidate, up to ``max_games``; where they did not, the games
shrink back toward ``min_games``. pycma's ``NoiseHandler`` measures the rank changes and decides.
It plays the re-evaluations itself through a function and draws which candidates from numpy's
global random state: here the run plays them as a batch like any other games, and the draw comes
from a Generator that the checkpoint keeps.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from tuner.games.budget import FixedGames
from tuner.strategies.base import StrategyKind
from tuner.strategies.pycma_es import CMAES, WithGames, cmaes_for, pycma

MAX_GAMES = 100_000  # as evaluation.games


@cache
def _handler_class() -> type:
    """``_Handler``: pycma's ``NoiseHandler`` subclassed when first used, not as this module
    loads, only to keep start-up fast (importing pycma takes a second that reading a config
    never needs); the module's attribute ``_Handler``, where a checkpoint's pickle finds it."""

    class _Handler(pycma().NoiseHandler):
        """pycma's noise handler, its choice of candidates to look at again drawn from
        ``rng``."""

        def __init__(self, dimension: int, games: int, least: int, most: int,
                     reevaluate: int | None, seed: int):
            # evaluations (the games per candidate) start at the median of [least, games, most]
            super().__init__(dimension, maxevals=[least, games, most], reevals=reevaluate,
                             epsilon=0)
            self.rng = np.random.default_rng([seed, 2009])

        def indices(self, fit) -> np.ndarray:
            """pycma's choice: ``reevals`` candidates (2 + popsize / 20 unless set, its
            fraction drawn), the first half of them the earliest asked, the rest the best of
            the others."""
            wanted = looked_at_again(self.lam_reeval, len(fit))
            count = int(wanted) + bool(wanted % 1 > self.rng.random())
            first = count - count // 2
            best_of_rest = np.argsort(np.asarray(fit)[first:], kind="stable") + first
            return np.asarray(list(range(first)) + list(best_of_rest[: count - first]))

    _Handler.__qualname__ = "_Handler"  # the name pickle looks up in this module
    return _Handler


def __getattr__(name: str) -> type:
    if name == "_Handler":
        return _handler_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class UncertaintyHandling(WithGames):
    """CMA-ES whose step size and games per candidate follow the measured rank noise."""

    def __init__(self, cma_es: CMAES, handler):
        super().__init__("uh-cma-es", cma_es, FixedGames(int(handler.evaluations)))
        self.handler = handler
        self._minimised: list[float] = []  # the generation just told, as pycma ranks it
        self._looked_at: list[int] = []

    def budget(self) -> FixedGames:
        return FixedGames(max(self.handler.minevals, int(self.handler.evaluations)))

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        self.games = self.budget()  # what this generation played, before the second look
        super().tell(xs, fitness)
        self._minimised = [-f for f in fitness]

    def second_look(self) -> list[int]:
        self._looked_at = [int(i) for i in self.handler.indices(self._minimised)]
        return self._looked_at

    def looked_again(self, fitness: list[float]) -> None:
        """Measure how far the looked-at candidates' ranks moved; then, as pycma's handler
        says, grow the step size or not, and set the games per candidate."""
        h = self.handler
        h.fit = list(self._minimised)
        h.fitre = list(self._minimised)
        for i, value in zip(self._looked_at, fitness):
            h.fitre[i] = -value
        h.idx = np.asarray(self._looked_at)
        h.update_measure()
        self.cma_es.es.sigma *= h.treat()

    def diagnostics(self) -> dict[str, float]:
        """CMA-ES's, the measured noise (above 0: the ranks moved more than without noise) and
        the games per candidate of the generation just told."""
        return {**super().diagnostics(), "noise": float(self.handler.noiseS),
                "games_per_candidate": self.games.games}


def read(check, section, games) -> dict:
    path = "strategy"
    least = check.integer(section, "min_games", path, default=max(2, (games or 8) // 4), low=2,
                          high=MAX_GAMES)
    most = check.integer(section, "max_games", path, default=min(MAX_GAMES, 8 * (games or 1)),
                         low=2, high=MAX_GAMES)
    raw = section.get("reevaluate", "auto")
    reevaluate = "auto" if raw == "auto" else check.integer(section, "reevaluate", path, low=1,
                                                            high=MAX_GAMES)
    if None not in (least, most, games) and not least <= games <= most:
        check.problem(path, f"min_games ({least}) <= evaluation.games ({games}) <= max_games "
                            f"({most}) must hold: the games per candidate start at "
                            "evaluation.games and stay between the two")
    return {"min_games": least, "max_games": most, "reevaluate": reevaluate}


def unfit(settings, population: int) -> tuple[str, str] | None:
    """More candidates to look at again than a generation has: nothing to choose them from."""
    reevaluate = settings["reevaluate"]
    if reevaluate != "auto" and reevaluate > population:
        return ("strategy.reevaluate", (f"{reevaluate} is more than the {population} "
                                        f"candidates of a generation: at most {population}, "
                                        "or auto"))
    return None


def looked_at_again(reevaluate: int | None, population: int) -> float:
    """How many candidates pycma looks at again after a generation: ``reevaluate``, or
    ``2 + population / 20`` (its fraction drawn: ``_Handler.indices``)."""
    return reevaluate or 2 + population / 20


def looks(settings, population: int) -> int:
    """The most candidates looked at again after a generation (what a run's price counts)."""
    reevaluate = settings["reevaluate"]
    return math.ceil(looked_at_again(None if reevaluate == "auto" else reevaluate, population))


def create(settings, shared, space) -> UncertaintyHandling:
    reevaluate = settings["reevaluate"]
    handler = _handler_class()(space.dimension, shared.games.games, settings["min_games"],
                               settings["max_games"], None if reevaluate == "auto" else reevaluate,
                               shared.seed)
    return UncertaintyHandling(cmaes_for(shared, space), handler)


KIND = StrategyKind(
    name="uh-cma-es",
    summary="CMA-ES with uncertainty handling: step size and games grow where noise decides "
            "the ranks",
    games="number",
    create=create,
    load=UncertaintyHandling.loads,
    keys=("min_games", "max_games", "reevaluate"),
    read=read,
    most=lambda games, settings: settings["max_games"],
    second_looks=lambda settings, population: min(population, looks(settings, population)),
    unfit=unfit,
)
