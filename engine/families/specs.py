"""What a family spec names, known without running any family's code: the spec's form, the
built-in and registered names, and the spec each family was found by.

Both the guard (whose messages name a family by its spec) and the registry (which finds families,
calling their code through the guard) build on this module, which imports neither of them.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
from pathlib import Path

from engine.families.base import Family
from engine.families.classic import CLASSIC
from engine.families.combined import COMBINED
from engine.families.features import FEATURES
from engine.families.ranked import RANKED
from engine.families.snake import SNAKE

ENTRY_POINT_GROUP = "tune2048.families"
FAMILIES: dict[str, Family] = {f.name: f for f in (CLASSIC, SNAKE, FEATURES, COMBINED, RANKED)}

_found: dict[str, Family] = {}  # canonical spec -> family, so each spec is imported once


def is_file_spec(spec: str) -> bool:
    """Whether ``spec`` names a class in a file (``path.py:ClassName``)."""
    path, sep, _ = spec.rpartition(":")
    return bool(sep) and path.endswith(".py")


def file_spec_path(spec: str, base_dir: str | os.PathLike | None = None) -> Path:
    """The absolute path of a file spec's file (relative paths against ``base_dir``)."""
    path = Path(spec.rpartition(":")[0]).expanduser()
    return Path(os.path.abspath(Path(base_dir or ".") / path))


def file_module_name(path: str | os.PathLike) -> str:
    """The name a family file is imported under in this process: one per path, used by no
    other import, and never the file's own (a module's, ``json.py``, or none Python could
    import, ``my-family.py``), so that any file name works and shadows nothing."""
    return "tune2048_family_file_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]


def registered() -> dict[str, importlib.metadata.EntryPoint]:
    """Families that installed packages register under ``tune2048.families``, by name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def found(spec: str) -> Family | None:
    """The family a built-in name or a canonical spec found already, else None."""
    return FAMILIES.get(spec) or _found.get(spec)


def remember(spec: str, family: Family) -> None:
    """Record the family a canonical spec found, so that the spec is not imported again."""
    _found[spec] = family


def spec_of(family: Family) -> str | None:
    """The spec this family was found by (a built-in's name, a file's canonical spec), or None
    for a family that was never found by a spec."""
    for name, known in FAMILIES.items():
        if known is family:
            return name
    return next((spec for spec, known in _found.items() if known is family), None)
