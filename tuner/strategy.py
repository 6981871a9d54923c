"""The search strategy: pycma's CMA-ES over the normalised [0, 1] box, with IPOP restarts.

The strategy holds no hidden state: CMA-ES's normal samples come from a ``numpy`` Generator owned
by the ES object itself (pycma's ``randn`` option), so pickling the ES captures its random state
and a resumed run draws exactly the candidates an uninterrupted run would.
"""

from __future__ import annotations

import pickle

import cma
import numpy as np


class SeededNormal:
    """pycma's ``randn(lam, N)`` drawn from a private, picklable Generator."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def __call__(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape)


class Strategy:
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
        es = cma.CMAEvolutionStrategy(self.x0, self.sigma0, options)
        self.popsize = es.popsize
        return es

    def ask(self) -> list[np.ndarray]:
        return [np.asarray(x) for x in self.es.ask()]

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        self.es.tell(xs, [-f for f in fitness])  # pycma minimises

    def termination(self) -> dict | None:
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
    def sigma(self) -> float:
        return float(self.es.sigma)

    @property
    def mean(self) -> np.ndarray:
        """The distribution mean, mapped into the bounds: CMA-ES's best guess of the optimum.

        (``es.mean`` lives in pycma's unbounded internal space; ``result.xfavorite`` is the point
        candidates are actually evaluated at.)
        """
        return np.asarray(self.es.result.xfavorite, dtype=np.float64).copy()

    def dumps(self) -> bytes:
        es = self.es
        self.es = None
        try:
            return pickle.dumps({"strategy": self, "es": es.pickle_dumps()})
        finally:
            self.es = es

    @staticmethod
    def loads(data: bytes) -> Strategy:
        state = pickle.loads(data)
        strategy = state["strategy"]
        strategy.es = pickle.loads(state["es"])
        return strategy
