"""``lra-cma-es``: CMA-ES with learning-rate adaptation (LRA-CMA-ES: Nomura, Akimoto and Ono,
GECCO 2023), from the ``cmaes`` package.

Where noise blurs what each generation says, LRA-CMA-ES lowers the learning rates of the mean
and the covariance so that their updates stay as reliable as a target signal-to-noise ratio
wants; with little noise it raises them again. Every candidate plays ``evaluation.games`` games.

The ``cmaes`` optimiser leaves its random state out of its pickle, so its generator is seeded
again from the run's seed and the generation before every generation's candidates are drawn: a
resumed run draws what an uninterrupted one would.
"""

from __future__ import annotations

import importlib.util
import pickle

import numpy as np

from tuner import pickles
from tuner.games.budget import FixedGames
from tuner.strategies.base import StrategyKind, envelope


def libraries() -> dict[str, str]:
    import cmaes  # an optional dependency (the lra extra): loaded where this strategy runs

    return {"cmaes": cmaes.__version__, "numpy": np.__version__}


class LearningRateAdaptation:
    """The ``cmaes`` package's CMA-ES with ``lr_adapt``, over the [0, 1] box, maximising."""

    name = "lra-cma-es"

    def __init__(self, x0: np.ndarray, sigma0: float, popsize: int, seed: int,
                 games: FixedGames):
        from cmaes import CMA  # optional (the lra extra), as in libraries

        self.seed = seed
        self.games = games
        self.es = CMA(mean=np.asarray(x0, dtype=np.float64), sigma=sigma0,
                      bounds=np.array([[0.0, 1.0]] * len(x0)), population_size=popsize,
                      lr_adapt=True)

    @property
    def popsize(self) -> int:
        return self.es.population_size

    def ask(self) -> list[np.ndarray]:
        state = np.random.SeedSequence([self.seed, self.es.generation]).generate_state(1)
        self.es.reseed_rng(int(state[0]))
        return [self.es.ask() for _ in range(self.popsize)]

    def budget(self) -> FixedGames:
        return self.games

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        self.es.tell([(x, -f) for x, f in zip(xs, fitness)])  # cmaes minimises

    def second_look(self) -> list[int]:
        return []

    def looked_again(self, fitness: list[float]) -> None:
        raise AssertionError("no second look was asked for")

    def termination(self) -> dict | None:
        return {"cmaes should_stop": True} if self.es.should_stop() else None

    @property
    def mean(self) -> np.ndarray:
        return np.clip(np.asarray(self.es.mean, dtype=np.float64), 0.0, 1.0)

    def diagnostics(self) -> dict[str, float]:
        # the step size: the cmaes package keeps it in an attribute of its own only
        return {"sigma": float(self.es._sigma), "restart": 0}

    def dumps(self) -> bytes:
        """The optimiser's attributes as they are: its own pickle keeps only one triangle of the
        covariance, and a covariance a rounding away from symmetric then comes back another,
        so a resumed run would part from an uninterrupted one. Its random state is not kept:
        ``ask`` seeds it."""
        es, self.es = self.es, None
        try:
            attributes = {k: v for k, v in vars(es).items() if k != "_rng"}
            state = pickle.dumps({"strategy": self, "es": attributes})
        finally:
            self.es = es
        return envelope(self.name, libraries(), state)

    @staticmethod
    def loads(state: bytes) -> LearningRateAdaptation:
        from cmaes import CMA  # optional (the lra extra), as in libraries

        parts = pickles.loads(state)
        strategy, es = parts["strategy"], CMA.__new__(CMA)
        vars(es).update(parts["es"], _rng=np.random.RandomState())
        strategy.es = es
        return strategy


def installed() -> bool:
    """Whether the ``cmaes`` package is there (an extra: ``tune2048[lra]``)."""
    return importlib.util.find_spec("cmaes") is not None


def read(check, section, games) -> dict:
    if not installed():
        check.problem("strategy.name", "lra-cma-es needs the cmaes package, which is not "
                                       "installed: pip install 'cmaes>=0.11'")
    return {}


MIN_POPULATION = 4  # two parents: with one, the cmaes package's rank-mu rate is 0, and divides


def unfit(settings, population: int) -> tuple[str, str] | None:
    """A population whose best half is one candidate: the cmaes package's update divides by
    zero and the search goes on with infinite learning rates."""
    if population < MIN_POPULATION:
        return ("cmaes.popsize", (f"lra-cma-es needs at least {MIN_POPULATION} candidates a "
                                  f"generation (two parents), got {population}"))
    return None


def create(settings, shared, space) -> LearningRateAdaptation:
    return LearningRateAdaptation(space.initial(), shared.sigma0,
                                  shared.population(space.dimension), shared.seed, shared.games)


KIND = StrategyKind(
    name="lra-cma-es",
    summary="CMA-ES with learning-rate adaptation (the cmaes package), every candidate on "
            "evaluation.games games",
    games="number",
    create=create,
    load=LearningRateAdaptation.loads,
    read=read,
    unfit=unfit,
    restarts=False,
)
