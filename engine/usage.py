"""What the command lines tell users: argument checks shared by the ``tune`` subcommands, and
bad values echoed in messages cut short (``echo``, ``shorten``).

A bad argument raises ``UsageError`` (a ``ValueError``) whose message names the option and what
it takes; the ``tune`` command prints it as one line and exits with status 2. Counts are bounded
so that a typo (``--games 10000000000``) is refused at once instead of exhausting memory: every
game's result is kept until the summary is printed.

This module imports nothing from the engine, so checking arguments never loads numba.
"""

from __future__ import annotations

import math
import re

MAX_GAMES = 1_000_000  # games one command plays per player (results are kept in memory)
MAX_WORKERS = 4096  # Ray CPUs a command asks for
MAX_SEED = 2**64 - 1  # game seeds are 64-bit
MAX_ECHO = 80  # characters of a bad value that a message echoes
ADDRESS_PATTERN = re.compile(r"^(auto|[A-Za-z0-9.-]+:\d{1,5})$")


class UsageError(ValueError):
    """A command-line argument is out of range or conflicts with another."""


def shorten(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters (with '...'), so a huge value cannot flood a message."""
    return text if len(text) <= limit else f"{text[: limit - 3]}..."


def echo(value: object, limit: int = MAX_ECHO) -> str:
    """``repr(value)``, shortened: how messages show a bad value."""
    return shorten(repr(value), limit)


def check_int(option: str, value: int | None, low: int, high: int) -> None:
    """Refuse an integer option outside ``low..high`` (None: not given, nothing to check)."""
    if value is not None and not low <= value <= high:
        raise UsageError(f"{option} must be from {low} to {high}, got {shorten(str(value))}")


def check_cutoff(value: float) -> None:
    """The search's probability cutoff: [0, 1), 0 for an exact search."""
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise UsageError(f"--cutoff must be in [0, 1) (0: exact search), got {value}")


def check_seed_range(seed: int, games: int) -> None:
    """Game i plays seed SEED + i: every one of them must be a 64-bit seed."""
    if not 0 <= seed <= MAX_SEED - max(games - 1, 0):
        raise UsageError(f"--seed must be from 0 to 2**64 - GAMES (game i plays seed SEED + i), "
                         f"got {shorten(str(seed))}")


def is_address(address: object) -> bool:
    """Whether ``address`` names a Ray cluster: 'auto', or HOST:PORT with a port 1 to 65535."""
    return isinstance(address, str) and bool(ADDRESS_PATTERN.match(address)) and (
        address == "auto" or 0 < int(address.rsplit(":", 1)[1]) < 65536)


def check_address(address: str | None) -> None:
    """``--address`` (None: not given, nothing to check)."""
    if address is not None and not is_address(address):
        raise UsageError(f"--address must be 'auto' or HOST:PORT, got {echo(address)}")
