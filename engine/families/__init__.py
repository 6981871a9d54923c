"""Heuristic families: the public API to write one, and the registry that finds one by spec.

Write a family with ``Family``, ``Param``, the ``row_*`` helpers and the heuristic terms
(``Heuristic``, ``LineSum``, ``BoardTerm``); find one with ``get_family(spec)``. A new built-in
family is a module in this package and one line in ``specs.FAMILIES``. Call into a family's
own code through ``family_code`` (``engine.families.guard``): whatever it raises is then one
``FamilyCodeError`` line.
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
from engine.families.errors import (
    FamilyCodeError,
    FamilyDefinitionError,
    FamilyNotFound,
    UntrustedFamily,
    UntrustedFamilyFile,
    UntrustedFamilyModule,
)
from engine.families.guard import family_code
from engine.families.registry import family_source_digest, get_family
from engine.families.specs import ENTRY_POINT_GROUP, FAMILIES
from engine.heuristic import BoardTerm, Heuristic, HeuristicError, LineSum, combine

__all__ = [
    "ENTRY_POINT_GROUP",
    "FAMILIES",
    "BoardTerm",
    "Family",
    "FamilyCodeError",
    "FamilyDefinitionError",
    "FamilyNotFound",
    "Heuristic",
    "HeuristicError",
    "LineSum",
    "Param",
    "UntrustedFamily",
    "UntrustedFamilyFile",
    "UntrustedFamilyModule",
    "combine",
    "family_code",
    "family_source_digest",
    "get_family",
    "grid_lines",
    "rank_powers",
    "row_empty",
    "row_ranks",
    "row_values",
]
