"""Reading typed values out of a parsed YAML document, collecting every problem with its key path.

A ``Checker`` never raises: each read returns the value, or a placeholder after recording one line
``SOURCE: key.path: what was expected``, so that one pass reports every problem at once.
"""

from __future__ import annotations

import difflib
import math
from typing import Any

from engine.echo import echo, shorten


class Checker:
    """Reads typed values out of nested mappings, collecting problems with their key paths."""

    def __init__(self, source: str, options: dict[str, str] | None = None):
        self.source = source
        # key paths whose value a command-line option gave: a problem names the option
        self.options = options or {}
        self.problems: list[str] = []
        self.bad_sections: set[str] = set()  # reported as missing or not a mapping

    def problem(self, path: str, message: str) -> None:
        section, _, key = path.partition(".")
        if key and section in self.bad_sections:
            return  # one line for the section, not one more for each of its keys
        where = self.options.get(path) or f"{self.source}: {path}"
        self.problems.append(f"{where}: {message}")

    def section(self, doc: dict, key: str, allowed: tuple[str, ...], required: bool = True) -> dict:
        value = doc.get(key)
        if value is None:
            if required and key not in doc:
                self.problem(key, "missing section")
                self.bad_sections.add(key)
            return {}
        if not isinstance(value, dict):
            self.problem(key, f"expected a mapping, got {describe(value)}")
            self.bad_sections.add(key)
            return {}
        self.unknown_keys(value, allowed, key)
        return value

    def unknown_keys(self, mapping: dict, allowed: tuple[str, ...], path: str) -> None:
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                shown = shorten(str(key))
                where = f"{path}.{shown}" if path else shown
                self.problem(where, f"unknown key (expected one of: {', '.join(allowed)}){hint}")

    def integer(self, mapping, key, path, default=None, low=None, high=None, optional=False):
        value = mapping.get(key, default)
        where = f"{path}.{key}"
        if value is None:
            if not optional:
                self.problem(where, "missing (expected an integer)")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(where, f"expected an integer, got {describe(value)}")
            return default
        if (low is not None and value < low) or (high is not None and value > high):
            self.problem(where, f"expected an integer {_range(low, high)}, got {shorten(str(value))}")
            return default
        return value

    def number(self, mapping, key, path, default=None, low=None, high=None, open_low=False,
               open_high=False):
        value = mapping.get(key, default)
        where = f"{path}.{key}"
        if value is None:
            self.problem(where, "missing (expected a number)")
            return math.nan
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.problem(where, f"expected a number, got {describe(value)}")
            return math.nan
        try:
            value = float(value)
        except OverflowError:
            self.problem(where, f"expected a finite number, got an integer of {len(str(value))} "
                                "digits (beyond a float's range)")
            return math.nan
        if not math.isfinite(value):
            self.problem(where, f"expected a finite number, got {value}")
            return math.nan
        too_low = low is not None and (value <= low if open_low else value < low)
        too_high = high is not None and (value >= high if open_high else value > high)
        if too_low or too_high:
            lo = f"{'>' if open_low else '>='} {low}" if low is not None else ""
            hi = f"{'<' if open_high else '<='} {high}" if high is not None else ""
            self.problem(where, f"expected a number {' and '.join(s for s in (lo, hi) if s)}, "
                                f"got {value}")
            return math.nan
        return value

    def choice(self, mapping, key, path, choices, default=None):
        value = mapping.get(key, default)
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.problem(f"{path}.{key}", f"expected one of {', '.join(choices)}, got "
                                          f"{echo(value)}{hint}")
            return default
        return value

    def text(self, mapping, key, path, default=None, pattern=None, what="a string",
             max_length=1024):
        """A string, matching ``pattern`` if given; never longer than ``max_length`` and never
        holding control characters (a NUL ends a path at the operating system)."""
        value = mapping.get(key, default)
        where = f"{path}.{key}"
        if value is None:
            self.problem(where, f"missing (expected {what})")
            return default
        if not isinstance(value, str) or (pattern is not None and not pattern.match(value)) or \
                any(ord(c) < 32 or ord(c) == 127 for c in value):
            self.problem(where, f"expected {what}, got {echo(value)}")
            return default
        if len(value) > max_length:
            self.problem(where, f"expected {what} of at most {max_length} characters, got "
                                f"{len(value):,}")
            return default
        return value


def describe(value: Any) -> str:
    return f"{type(value).__name__} {echo(value)}"


def _range(low, high) -> str:
    if low is not None and high is not None:
        return f"from {low} to {high}"
    return f">= {low}" if low is not None else f"<= {high}"
