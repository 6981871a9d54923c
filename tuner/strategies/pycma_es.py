"""pycma's CMA-ES, and the strategies built on it (fixed, racing, population).

``CMAES`` is CMA-ES over the normalised [0, 1] box, with IPOP restarts. It holds no hidden state:
its normal samples come from a ``numpy`` Generator owned by the ES object itself (pycma's
``randn`` option), so pickling the ES captures its random state and a resumed run draws exactly
the candidates an uninterrupted run would. ``CMAESStrategy`` is a strategy: a ``CMAES`` under its
config name.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING

import numpy as np

from tuner import pickles
from tuner.games.pycma import pycma
from tuner.strategies.base import Result, Shared, StrategyStateError, envelope, unreadable

if TYPE_CHECKING:
    import cma

    from tuner.space import SearchSpace


class SeededNormal:
    """pycma's ``randn(lam, N)`` drawn from a private, picklable Generator."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def __call__(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape)


class CMAES:
    """CMA-ES that maximises: ``tell`` takes fitness (higher is better) and negates it once."""

    def __init__(self, x0, sigma0: float, popsize: int | None, seed: int, restarts: int):
        self.x0 = np.asarray(x0, dtype=np.float64)
        self.sigma0 = sigma0
        self.seed = seed
        self.restarts_left = restarts
        self.restart = 0
        self.popsize = popsize
        self.es = self._new_es()

    def _new_es(self) -> cma.CMAEvolutionStrategy:
        options = {
            "bounds": [0.0, 1.0],
            "seed": np.nan,  # pycma leaves numpy's global state alone
            "randn": SeededNormal([self.seed, self.restart]),
            "verbose": -9,
        }
        if self.popsize is not None:
            options["popsize"] = self.popsize
        es = pycma().CMAEvolutionStrategy(self.x0, self.sigma0, options)
        self.popsize = es.popsize
        return es

    def ask(self) -> list[np.ndarray]:
        return [np.asarray(x) for x in self.es.ask()]

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        self.es.tell(xs, [-f for f in fitness])  # pycma minimises

    def stop(self) -> dict | None:
        """pycma's own stop criteria; restarts with a doubled population while restarts are left.

        Returns the criteria that ended the run, or None while it goes on.
        """
        stop = dict(self.es.stop())
        if not stop:
            return None
        if self.restarts_left > 0:
            self.restarts_left -= 1
            self.restart += 1
            self.popsize *= 2
            self.es = self._new_es()
            return None
        return stop

    @property
    def result(self) -> Result:
        """The distribution mean, mapped into the bounds (CMA-ES's best guess of the optimum),
        the step size and the restarts so far. (``es.mean`` lives in pycma's unbounded internal
        space; ``result.xfavorite`` is the point candidates are actually evaluated at.)"""
        mean = np.asarray(self.es.result.xfavorite, dtype=np.float64).copy()
        return Result(mean, float(self.es.sigma), self.restart)

    def dumps(self) -> bytes:
        """The state pickled inside an envelope of plain types that names the libraries which
        wrote it: pycma's and numpy's pickles load only under versions close to theirs."""
        es = self.es
        self.es = None
        try:
            state = pickle.dumps({"strategy": self, "es": es.pickle_dumps()})
        finally:
            self.es = es
        return pickle.dumps({"libraries": libraries(), "state": state})

    @staticmethod
    def loads(data: bytes) -> CMAES:
        """Raises ``StrategyStateError`` when the state cannot be read here."""
        written_with = None
        pycma()  # under its warnings filter, before the pickle would import it without
        try:
            state = pickles.loads(data)
            if "libraries" in state:  # else the envelope-less layout of tune2048 0.1.0
                written_with = state["libraries"]
                state = pickles.loads(state["state"])
            strategy = state["strategy"]
            strategy.es = pickles.loads(state["es"])
        except Exception as err:  # noqa: BLE001 - a foreign pickle can raise almost anything
            raise StrategyStateError(unreadable("CMA-ES", written_with, libraries(), err)) from None
        return strategy


def libraries() -> dict[str, str]:
    """The versions of the libraries whose objects ``CMAES``'s state pickles."""
    return {"cma": pycma().__version__.split()[0], "numpy": np.__version__}


def cmaes_for(shared: Shared, space: SearchSpace, popsize: int | None = None) -> CMAES:
    """pycma's CMA-ES at the space's initial point, with ``popsize`` candidates if given, else
    the run's (pycma's default where it names none)."""
    return CMAES(space.initial(), shared.sigma0, popsize or shared.popsize, shared.seed,
                 shared.restarts)


class CMAESStrategy:
    """A strategy of pycma's CMA-ES (``CMAES``) under its config ``name``: every strategy of this
    module, which differ in their population and the games the run gives each candidate."""

    def __init__(self, name: str, cma_es: CMAES):
        self.name = name
        self.cma_es = cma_es

    @property
    def popsize(self) -> int:
        return self.cma_es.popsize

    def ask(self) -> list[np.ndarray]:
        return self.cma_es.ask()

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        self.cma_es.tell(xs, fitness)

    def stop(self) -> dict | None:
        return self.cma_es.stop()

    @property
    def result(self) -> Result:
        return self.cma_es.result

    def dumps(self) -> bytes:
        """The strategy pickled with its CMA-ES apart, in ``CMAES.dumps``' own envelope."""
        cma_es, self.cma_es = self.cma_es, None
        try:
            state = pickle.dumps({"strategy": self, "cma_es": cma_es.dumps()})
        finally:
            self.cma_es = cma_es
        return envelope(self.name, libraries(), state)

    @staticmethod
    def loads(state: bytes) -> CMAESStrategy:
        parts = pickles.loads(state)
        strategy = parts["strategy"]
        vars(strategy).pop("games", None)  # tune2048 0.3 kept the run's budget here
        strategy.cma_es = CMAES.loads(parts["cma_es"])
        return strategy
