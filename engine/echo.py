"""Bad values echoed in messages, cut short, so that a huge value cannot flood a message."""

from __future__ import annotations

MAX_ECHO = 80  # characters of a bad value that a message echoes


def shorten(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters (with '...')."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def echo(value: object, limit: int = MAX_ECHO) -> str:
    """``repr(value)``, shortened: how messages show a bad value."""
    return shorten(repr(value), limit)
