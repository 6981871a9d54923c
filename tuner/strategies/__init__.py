"""Search strategies: what proposes a generation's candidates and learns from their fitness
(``base.Strategy``); how many games each candidate plays is the loop's (``tuner.games.budget``).

A strategy is one module here, with its ``KIND`` (``base.StrategyKind``: its config name, the
``strategy`` keys it reads, how it is built and restored), and one entry in ``STRATEGIES``: the
config asks this registry for every name, key and check. A strategy is built from its own
settings, the run's ``base.Shared`` values and the ``tuner.space.SearchSpace``, never from the
run's config. The config names one in ``strategy.name``; without it, ``evaluation.games`` decides
(the ``implied`` strategy of its form), as in tune2048 0.1 and 0.2: ``fixed`` for a number,
``racing`` for ``{min, max}``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from tuner import pickles
from tuner.strategies import fixed, population, racing
from tuner.strategies.base import (
    Result,
    Settings,
    Shared,
    Strategy,
    StrategyKind,
    StrategyStateError,
    unreadable,
)
from tuner.strategies.pycma_es import CMAES, CMAESStrategy

if TYPE_CHECKING:
    from tuner.space import SearchSpace

STRATEGIES: dict[str, StrategyKind] = {
    kind.name: kind for kind in (fixed.KIND, racing.KIND, population.KIND)
}
# strategies an earlier version had -> the version that removed them (the config refuses them
# with why, in tuner.config.removed; a checkpoint's state of one is refused here)
REMOVED = {"uh-cma-es": "0.4.0", "lra-cma-es": "0.4.0"}


def implied(games: str) -> str:
    """The strategy a config without a ``strategy`` section runs: the ``implied`` one whose
    ``games`` (``"number"`` or ``"race"``) is what ``evaluation.games`` is."""
    return next(name for name, kind in STRATEGIES.items() if kind.implied and kind.games == games)


def strategy_for(name: str, settings: Settings, shared: Shared, space: SearchSpace) -> Strategy:
    """Strategy ``name`` at the run's start, with its ``settings`` (what its ``read`` returned)."""
    return STRATEGIES[name].create(settings, shared, space)


def restore_strategy(data: bytes, name: str) -> Strategy:
    """A strategy from a checkpoint's bytes; ``StrategyStateError`` if they cannot be read, or
    hold a strategy that this version removed. A checkpoint of tune2048 0.1 or 0.2 holds pycma's
    CMA-ES alone: it resumes as strategy ``name`` (the config's: ``fixed`` or ``racing``)."""
    try:
        top = pickles.loads(data)
    except Exception:  # noqa: BLE001 - unreadable here: CMAES.loads below says why
        top = None
    written = top.get("strategy") if isinstance(top, dict) else None
    if not isinstance(written, str):
        return CMAESStrategy(name, CMAES.loads(data))
    if written in REMOVED:
        raise StrategyStateError(f"the checkpoint holds strategy {written}, removed in tune2048 "
                                 f"{REMOVED[written]}, so the run cannot go on: start a new one "
                                 "from its config.yaml without the strategy section")
    if written not in STRATEGIES:
        raise StrategyStateError(f"the checkpoint holds a {written!r} strategy, which this "
                                 f"version of tune2048 does not know ({', '.join(STRATEGIES)}): "
                                 "resume it with the version that wrote it")
    written_with = top.get("libraries") or {}
    try:
        return STRATEGIES[written].load(top["state"])
    except Exception as err:  # noqa: BLE001 - a foreign pickle can raise almost anything
        raise StrategyStateError(unreadable(written, written_with, installed(written_with),
                                            err)) from None


def installed(libraries: dict[str, str]) -> dict[str, str]:
    """The versions installed here of the libraries named."""
    found = {}
    for name in libraries:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "(not installed)"
    return found


__all__ = ["REMOVED", "STRATEGIES", "Result", "Shared", "Strategy", "StrategyStateError",
           "implied", "restore_strategy", "strategy_for"]
