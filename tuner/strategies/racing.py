"""``racing``: every candidate plays ``evaluation.games``' ``min``, and the candidates whose rank
is still undecided play more, up to ``max`` (the race: ``tuner.games.budget.AdaptiveGames``)."""

from __future__ import annotations

from tuner.strategies.base import StrategyKind
from tuner.strategies.pycma_es import WithGames, cmaes_for

KIND = StrategyKind(
    name="racing",
    summary="CMA-ES; candidates whose rank is undecided play more games (evaluation.games: "
            "{min, max})",
    games="race",
    create=lambda settings, shared, space: WithGames("racing", cmaes_for(shared, space),
                                                     shared.games),
    load=WithGames.loads,
    implied=True,
)
