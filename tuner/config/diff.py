"""What differs between two resolved configs, key path by key path: what a resume compares a run's
stored config against, and what a new run in a run directory is told apart by."""

from __future__ import annotations

from typing import Any

from tuner.config.removed import harmless


def changed_keys(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Key paths whose values differ between two resolved configs; a removed key that one of
    them holds at a harmless value (``tuner.config.removed``) and the other lacks is the same."""
    changed = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            changed.extend(changed_keys(a, b, f"{path}."))
        elif a != b and not (key not in new and harmless(path, a)
                             or key not in old and harmless(path, b)):
            changed.append(path)
    return changed


def value_at(resolved: dict, path: str) -> Any:
    """The value at a key path of ``changed_keys`` (None where it is not set)."""
    value: Any = resolved
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value
