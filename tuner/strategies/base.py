"""What the tuning loop asks of a strategy, and what each kind of strategy declares.

A strategy is pycma's ``OOOptimizer`` and no more: it proposes a generation's candidates
(``ask``), learns from their fitness (``tell``), says when it has converged (``stop``), gives its
best guess (``result``), and saves its state (``dumps``). Points are in the normalised [0, 1] box
(``tuner.space``); fitness is higher-is-better. How many games each candidate plays is the
loop's, from the run's budget (``tuner.games.budget``).

Every strategy holds its whole state, random state included, in what ``dumps`` returns, so that a
resumed run asks exactly what an uninterrupted one would have.
"""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from engine.errors import BadInput

if TYPE_CHECKING:
    from tuner.checker import Checker
    from tuner.space import SearchSpace


@dataclass(frozen=True)
class Result:
    """What a strategy has found so far, and the numbers of its history row."""

    mean: np.ndarray  # its best guess of the optimum (pycma's ``xfavorite``)
    sigma: float  # its step size
    restart: int  # its IPOP restarts so far


class Strategy(Protocol):
    """What the tuning loop asks of a strategy, in this order each generation: ``ask``, ``tell``
    (the fitness of what it asked), ``result``, ``stop``; ``dumps`` for the checkpoint."""

    name: str  # its config name (``STRATEGIES``)
    popsize: int  # candidates per generation (an IPOP restart may change it)

    def ask(self) -> list[np.ndarray]:
        """This generation's candidates."""

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        """The candidates' fitness, in the order asked."""

    def stop(self) -> dict | None:
        """The strategy's own reasons to stop (None: go on, after restarting if it restarts);
        called once a generation, after ``tell``."""

    @property
    def result(self) -> Result:
        """Its best guess and numbers, as of the generation just told."""

    def dumps(self) -> bytes:
        """The whole state, for the checkpoint (``tuner.strategies.restore_strategy``)."""


Settings = dict[str, Any]


def default_popsize(dimension: int) -> int:
    """pycma's default population for ``dimension`` tuned parameters: 4 + 3 ln n."""
    return int(4 + 3 * math.log(max(dimension, 1)))


@dataclass(frozen=True)
class Shared:
    """The run's values that every strategy may read, besides its own settings and the search
    space: the config's ``run.seed``, ``cmaes.sigma0``, ``cmaes.popsize`` (``auto`` resolved)
    and ``cmaes.restarts``."""

    seed: int  # every random draw of the strategy derives from it
    sigma0: float  # the first step size, in the normalised [0, 1] box
    popsize: int | None  # None: pycma's default for the space (default_popsize)
    restarts: int  # IPOP restarts, each doubling the population

    def population(self, dimension: int, scale: int = 1) -> int:
        """The first generation's candidates: ``scale`` times ``popsize``, or times pycma's
        default for ``dimension`` tuned parameters where it is not set."""
        return (self.popsize or default_popsize(dimension)) * scale


@dataclass(frozen=True)
class StrategyKind:
    """One entry of ``STRATEGIES``: a strategy as the config names it. No code outside its
    module names it: the config asks this for its names, keys and checks.

    ``games``: what ``evaluation.games`` must be for it, ``"number"`` (the games every candidate
    plays) or ``"race"`` (the race's ``{min, max, ...}``); the ``implied`` one of each form is
    the strategy of a config without a ``strategy`` section. ``read(check, section)``: its own
    keys of the ``strategy`` section, checked and with their defaults (``keys`` names them all).
    ``create(settings, shared, space)``: the strategy at the run's start, from what ``read``
    returned; ``load(state)``: a strategy from what its ``dumps`` put in the envelope
    (``envelope``). ``factor``: the key of its settings that multiplies its population
    (``scale``)."""

    name: str
    summary: str
    games: str
    create: Callable[[Settings, Shared, SearchSpace], Strategy]
    load: Callable[[bytes], Strategy]
    keys: tuple[str, ...] = ()
    read: Callable[[Checker, Mapping], Settings] = field(default=lambda check, section: {})
    factor: str | None = None
    implied: bool = False  # what evaluation.games alone names, for its form of games

    def scale(self, settings: Settings) -> int:
        """Its population, as a multiple of ``cmaes.popsize`` (or of pycma's default)."""
        return settings[self.factor] if self.factor else 1


class StrategyStateError(BadInput):
    """A checkpoint's strategy state cannot be read with the libraries installed here."""


def envelope(name: str, libraries: dict[str, str], state: bytes) -> bytes:
    """A strategy's state inside a pickle of plain types that names the strategy and the
    libraries which wrote it: their pickles load only under versions close to theirs."""
    return pickle.dumps({"strategy": name, "libraries": libraries, "state": state})


def unreadable(what: str, written_with: dict | None, here: dict[str, str],
               err: Exception) -> str:
    """Why a strategy's state cannot be read here, and what reads it."""
    installed = ", ".join(f"{name} {version}" for name, version in here.items())
    cause = f"{type(err).__name__}: {err}"
    if written_with is None:
        return (f"the {what} state cannot be read with {installed} ({cause}); it was written by "
                "tune2048 0.1.0 with other versions of them: resume where it was written")
    wrote = ", ".join(f"{name} {version}" for name, version in written_with.items())
    return (f"the {what} state was written with {wrote} and cannot be read with {installed} "
            f"({cause}): install those versions to resume it")
