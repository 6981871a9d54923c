"""The heuristic families, by name. Add a family by writing a module and listing it here."""

from engine.families.base import Family, LineTables, Param
from engine.families.classic import CLASSIC
from engine.families.combined import COMBINED
from engine.families.features import FEATURES
from engine.families.snake import SNAKE

FAMILIES: dict[str, Family] = {f.name: f for f in (CLASSIC, SNAKE, FEATURES, COMBINED)}


def get_family(name: str) -> Family:
    """The family called ``name``; ValueError listing the known names otherwise."""
    try:
        return FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(
            f"unknown heuristic family {name!r}; known families: {', '.join(FAMILIES)}"
        ) from None


__all__ = ["FAMILIES", "Family", "LineTables", "Param", "get_family"]
