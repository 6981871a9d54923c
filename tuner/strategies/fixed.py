"""``fixed``: CMA-ES, every candidate on the same ``evaluation.games`` games."""

from __future__ import annotations

from tuner.strategies.base import StrategyKind
from tuner.strategies.pycma_es import CMAESStrategy, cmaes_for

KIND = StrategyKind(
    name="fixed",
    summary="CMA-ES; every candidate plays evaluation.games games",
    games="number",
    create=lambda settings, shared, space: CMAESStrategy("fixed", cmaes_for(shared, space)),
    load=CMAESStrategy.loads,
    implied=True,
)
