"""Search strategies: what proposes a generation's candidates, how many games each plays, and
what is learnt from them (``base.Strategy``).

A strategy is one module here, with its ``KIND`` (``base.StrategyKind``: its config name, the
``strategy`` keys it reads, how it is built and restored), and one entry in ``STRATEGIES``. The
config names one in ``strategy.name``; without it, ``evaluation.games`` decides, as in tune2048
0.1 and 0.2: ``fixed`` for a number, ``racing`` for ``{min, max}``.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING

from tuner import pickles
from tuner.strategies import fixed, lra_cma_es, population, racing, uh_cma_es
from tuner.strategies.base import Strategy, StrategyKind, StrategyStateError, unreadable

if TYPE_CHECKING:
    from tuner.config import RunConfig
    from tuner.space import SearchSpace

STRATEGIES: dict[str, StrategyKind] = {
    kind.name: kind
    for kind in (fixed.KIND, racing.KIND, population.KIND, uh_cma_es.KIND, lra_cma_es.KIND)
}


def strategy_for(config: RunConfig, space: SearchSpace) -> Strategy:
    """The strategy a run config asks for, at its initial point."""
    return STRATEGIES[config.strategy.name].create(config, space)


def restore_strategy(data: bytes, config: RunConfig) -> Strategy:
    """A strategy from a checkpoint's bytes; ``StrategyStateError`` if they cannot be read.
    A checkpoint of tune2048 0.1 or 0.2 holds pycma's CMA-ES alone: its games are the config's
    (``fixed`` or ``racing``)."""
    try:
        top = pickles.loads(data)
    except Exception:  # noqa: BLE001 - unreadable here: CMAES.loads below says why
        top = None
    name = top.get("strategy") if isinstance(top, dict) else None
    if not isinstance(name, str):
        from tuner.strategies.pycma_es import CMAES, WithGames

        return WithGames(config.strategy.name, CMAES.loads(data), config.evaluation.games)
    if name not in STRATEGIES:
        raise StrategyStateError(f"the checkpoint holds a {name!r} strategy, which this version "
                                 f"of tune2048 does not know ({', '.join(STRATEGIES)}): resume "
                                 "it with the version that wrote it")
    written_with = top.get("libraries") or {}
    try:
        return STRATEGIES[name].load(top["state"])
    except Exception as err:  # noqa: BLE001 - a foreign pickle can raise almost anything
        raise StrategyStateError(unreadable(name, written_with, installed(written_with),
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


__all__ = ["STRATEGIES", "Strategy", "StrategyStateError", "restore_strategy", "strategy_for"]
