"""``racing``: CMA-ES whose candidates race: every candidate plays ``evaluation.games``' ``min``,
and the loop plays more for those whose rank is still undecided, up to ``max`` (the race:
``tuner.games.budget.AdaptiveGames``)."""

from __future__ import annotations

from tuner.strategies.base import StrategyKind
from tuner.strategies.pycma_es import CMAESStrategy, cmaes_for

KIND = StrategyKind(
    name="racing",
    summary="CMA-ES; candidates whose rank is undecided play more games (evaluation.games: "
            "{min, max})",
    games="race",
    create=lambda settings, shared, space: CMAESStrategy("racing", cmaes_for(shared, space)),
    load=CMAESStrategy.loads,
    implied=True,
)
