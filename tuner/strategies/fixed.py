"""``fixed``: every candidate plays the same games, ``evaluation.games`` of them."""

from __future__ import annotations

from tuner.strategies.base import StrategyKind
from tuner.strategies.pycma_es import WithGames, cmaes_for

KIND = StrategyKind(
    name="fixed",
    summary="CMA-ES; every candidate plays evaluation.games games",
    games="number",
    create=lambda settings, shared, space: WithGames("fixed", cmaes_for(shared, space),
                                                     shared.games),
    load=WithGames.loads,
    implied=True,
    reevaluate_best=True,
)
