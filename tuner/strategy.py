"""The search strategy: what proposes candidates and learns from their fitness.

``SearchStrategy`` is what the tuning loop needs of one; ``CMAES`` (pycma's CMA-ES over the
normalised [0, 1] box, with IPOP restarts) is the one we ship, built from a config by
``strategy_for``.

The strategy holds no hidden state: CMA-ES's normal samples come from a ``numpy`` Generator owned
by the ES object itself (pycma's ``randn`` option), so pickling the ES captures its random state
and a resumed run draws exactly the candidates an uninterrupted run would.
"""

from __future__ import annotations

import pickle
import warnings
from typing import TYPE_CHECKING, Protocol

import numpy as np

with warnings.catch_warnings():
    # pycma warns at import when matplotlib is missing (it is our optional plot extra), about
    # plotting of its own that we never use
    warnings.filterwarnings("ignore", "Could not import matplotlib", UserWarning, r"cma\.")
    import cma

from engine.errors import BadInput

if TYPE_CHECKING:
    from tuner.config import RunConfig
    from tuner.space import SearchSpace


class SearchStrategy(Protocol):
    """What the tuning loop asks of a strategy. Points are in the normalised [0, 1] box
    (``tuner.space``); fitness is higher-is-better."""

    def ask(self) -> list[np.ndarray]:
        """This generation's candidates."""

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        """The candidates' fitness, in the order asked."""

    def rank_weights(self) -> list[float]:
        """How much each rank of the generation just asked counts in the update, best first
        (what adaptive games spend on: ``tuner.budget``)."""

    def termination(self) -> dict | None:
        """The strategy's own reasons to stop (None: go on); called once after each ``tell``."""

    @property
    def mean(self) -> np.ndarray:
        """The strategy's best guess of the optimum."""

    def diagnostics(self) -> dict[str, float]:
        """Numbers for the history row of the generation just told (before any restart)."""

    def dumps(self) -> bytes:
        """The whole state, for the checkpoint; ``loads`` of the class gives it back."""


class SeededNormal:
    """pycma's ``randn(lam, N)`` drawn from a private, picklable Generator."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def __call__(self, *shape: int) -> np.ndarray:
        return self.rng.standard_normal(shape)


def strategy_for(config: RunConfig, space: SearchSpace) -> CMAES:
    """The strategy a run config asks for, at its initial point."""
    cmaes = config.cmaes
    return CMAES(space.initial(), cmaes.sigma0, cmaes.popsize, config.run.seed, cmaes.restarts)


def restore_strategy(data: bytes) -> SearchStrategy:
    """A strategy from a checkpoint's bytes; ``StrategyStateError`` if they cannot be read."""
    return CMAES.loads(data)


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
        es = cma.CMAEvolutionStrategy(self.x0, self.sigma0, options)
        self.popsize = es.popsize
        return es

    def ask(self) -> list[np.ndarray]:
        return [np.asarray(x) for x in self.es.ask()]

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        self.es.tell(xs, [-f for f in fitness])  # pycma minimises

    def rank_weights(self) -> list[float]:
        """pycma's recombination weights: positive for the best half (the mean and the
        covariance), negative for the rest (active CMA: the covariance only)."""
        return [float(w) for w in self.es.sp.weights]

    def diagnostics(self) -> dict[str, float]:
        return {"sigma": self.sigma, "restart": self.restart}

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
        try:
            state = pickle.loads(data)
            if "libraries" in state:  # else the envelope-less layout of tune2048 0.1.0
                written_with = state["libraries"]
                state = pickle.loads(state["state"])
            strategy = state["strategy"]
            strategy.es = pickle.loads(state["es"])
        except Exception as err:  # noqa: BLE001 - a foreign pickle can raise almost anything
            raise StrategyStateError(_unreadable(written_with, err)) from None
        return strategy


class StrategyStateError(BadInput):
    """A checkpoint's strategy state cannot be read with the libraries installed here."""


def libraries() -> dict[str, str]:
    """The versions of the libraries whose objects the strategy's state pickles."""
    return {"cma": cma.__version__.split()[0], "numpy": np.__version__}


def _unreadable(written_with: dict | None, err: Exception) -> str:
    here = ", ".join(f"{name} {version}" for name, version in libraries().items())
    cause = f"{type(err).__name__}: {err}"
    if written_with is None:
        return (f"the CMA-ES state cannot be read with {here} ({cause}); it was written by "
                "tune2048 0.1.0 with other versions of them: resume where it was written")
    wrote = ", ".join(f"{name} {version}" for name, version in written_with.items())
    return (f"the CMA-ES state was written with {wrote} and cannot be read with {here} "
            f"({cause}): install those versions to resume it")


Strategy = CMAES  # the class's name in checkpoints written by tune2048 0.1.0
