"""What the tuning loop asks of a strategy, and what each kind of strategy declares.

A strategy is one thing: it proposes a generation's candidates, says how many games each plays
(a ``tuner.games.budget`` budget: a fixed number or a race), may ask for a second look at a few of
them on fresh seeds, and learns from their fitness. Points are in the normalised [0, 1] box
(``tuner.space``); fitness is higher-is-better.

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
from tuner.games.budget import Budget

if TYPE_CHECKING:
    from tuner.checker import Checker
    from tuner.space import SearchSpace


class Strategy(Protocol):
    """What the tuning loop asks of a strategy, in this order each generation: ``ask``,
    ``budget`` (and ``rank_weights`` when it races), ``tell``, ``second_look`` and, if it named
    any candidate, ``looked_again``; then ``termination``."""

    name: str  # its config name (``STRATEGIES``)
    popsize: int  # candidates per generation (an IPOP restart may change it)

    def ask(self) -> list[np.ndarray]:
        """This generation's candidates."""

    def budget(self) -> Budget:
        """The games each candidate of this generation plays."""

    def rank_weights(self) -> list[float]:
        """How much each rank of the generation just asked counts, best first: what a race
        spends its games on (``tuner.games.budget``); asked only when ``budget`` races."""

    def tell(self, xs: list[np.ndarray], fitness: list[float]) -> None:
        """The candidates' fitness, in the order asked."""

    def second_look(self) -> list[int]:
        """Candidates of the generation just told to play again, on fresh seeds and as many
        games as ``budget`` gave them (none for most strategies)."""

    def looked_again(self, fitness: list[float]) -> None:
        """The fitness of the candidates ``second_look`` named, in its order."""

    def termination(self) -> dict | None:
        """The strategy's own reasons to stop (None: go on); called once a generation."""

    @property
    def mean(self) -> np.ndarray:
        """The strategy's best guess of the optimum."""

    def diagnostics(self) -> dict[str, float]:
        """Numbers for the history row of the generation just told (before any restart)."""

    def dumps(self) -> bytes:
        """The whole state, for the checkpoint (``tuner.strategies.restore_strategy``)."""


Settings = dict[str, Any]


def default_popsize(dimension: int) -> int:
    """pycma's default population for ``dimension`` tuned parameters: 4 + 3 ln n."""
    return int(4 + 3 * math.log(max(dimension, 1)))


@dataclass(frozen=True)
class Shared:
    """The run's values that every strategy may read, besides its own settings and the search
    space: the config's ``run.seed``, ``cmaes.sigma0``, ``cmaes.popsize`` (``auto`` resolved),
    ``cmaes.restarts`` and ``evaluation.games``."""

    seed: int  # every random draw of the strategy derives from it
    sigma0: float  # the first step size, in the normalised [0, 1] box
    popsize: int | None  # None: pycma's default for the space (default_popsize)
    restarts: int  # IPOP restarts, each doubling the population
    games: Budget  # a number of games (FixedGames) or a race (AdaptiveGames)

    def population(self, dimension: int, scale: int = 1) -> int:
        """The first generation's candidates: ``scale`` times ``popsize``, or times pycma's
        default for ``dimension`` tuned parameters where it is not set."""
        return (self.popsize or default_popsize(dimension)) * scale


@dataclass(frozen=True)
class StrategyKind:
    """One entry of ``STRATEGIES``: a strategy as the config names it. No code outside its
    module names it: the config asks this for its names, keys, checks and games.

    ``games``: what ``evaluation.games`` must be for it, ``"number"`` (the games every candidate
    plays, or starts with) or ``"race"`` (the race's ``{min, max, ...}``); the ``implied`` one of
    each form is the strategy of a config without a ``strategy`` section. ``read(check, section,
    games)``: its own keys of the ``strategy`` section, checked and with their defaults (``keys``
    names them all; ``games`` is ``evaluation.games``' number, None for a race).
    ``create(settings, shared, space)``: the strategy at the run's start, from what ``read``
    returned; ``load(state)``: a strategy from what its ``dumps`` put in the envelope
    (``envelope``). ``factor``: the key of its settings that multiplies its population
    (``scale``). ``most(games, settings)``: the most games one candidate can play in a
    generation. ``second_looks(settings, population)``: the most candidates it plays again after a
    generation of ``population`` (``Strategy.second_look``), each at the generation's most games
    (what a run's price counts). ``unfit(settings, population)``: what its settings cannot do with a first
    generation of ``population`` candidates (``cmaes.popsize`` resolved, times ``scale``), as
    ``(key path, problem)``, or None; the config asks it of every population a run can start
    with, ``auto``'s included."""

    name: str
    summary: str
    games: str
    create: Callable[[Settings, Shared, SearchSpace], Strategy]
    load: Callable[[bytes], Strategy]
    keys: tuple[str, ...] = ()
    read: Callable[[Checker, Mapping, int | None], Settings] = field(
        default=lambda check, section, games: {})
    factor: str | None = None
    most: Callable[[int, Settings], int] = field(default=lambda games, settings: games)
    second_looks: Callable[[Settings, int], int] = field(
        default=lambda settings, population: 0)
    unfit: Callable[[Settings, int], tuple[str, str] | None] = field(
        default=lambda settings, population: None)
    restarts: bool = True  # whether it can restart (cmaes.restarts)
    implied: bool = False  # what evaluation.games alone names, for its form of games
    # whether evaluation.reevaluate_best may play its best candidates again: not where it
    # decides itself which candidates play more
    reevaluate_best: bool = False

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
