"""Heuristic families: the public API to write one, and the registry that finds one by spec.

Write a family with ``Family``, ``Param``, the ``row_*`` helpers and the heuristic terms
(``Heuristic``, ``LineSum``, ``BoardTerm``); find one with ``get_family(spec)``. A new built-in
family is a module in this package and one line in ``registry.FAMILIES``.
"""

from engine.families.base import (
    Family,
    Param,
    grid_lines,
    rank_powers,
    row_empty,
    row_ranks,
    row_values,
)
from engine.families.registry import (
    ENTRY_POINT_GROUP,
    FAMILIES,
    FamilyNotFound,
    UntrustedFamilyFile,
    get_family,
)
from engine.heuristic import BoardTerm, Heuristic, HeuristicError, LineSum, combine

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "BoardTerm",
    "Family",
    "FamilyNotFound",
    "Heuristic",
    "HeuristicError",
    "LineSum",
    "Param",
    "UntrustedFamilyFile",
    "combine",
    "get_family",
    "grid_lines",
    "rank_powers",
    "row_empty",
    "row_ranks",
    "row_values",
]
