"""The bounds of a run config's values, and the names it reserves: what the sections check
against, and what the command line's options share with them."""

from __future__ import annotations

import re

MAX_WORKERS = 4096  # Ray CPUs a command asks for
ADDRESS_PATTERN = re.compile(r"^(auto|[A-Za-z0-9.-]+:\d{1,5})$")
MAX_CONFIG_BYTES = 1 << 20  # a config is a few kilobytes; more is not one (or /dev/zero)
# Upper bounds on counts: a typo (games: 10000000000) is refused when the config is read, not
# met as exhausted memory later (every game's result of a generation is kept until it is scored).
MAX_GAMES = 100_000  # games per candidate, and validation games per candidate
MAX_POPSIZE = 10_000
MAX_RESTARTS = 10  # each doubles the population
MAX_GENERATIONS = 10**9
MAX_TOTAL_GAMES = 10**15
MAX_GAMES_PER_TASK = 100_000
MAX_RETRIES = 100
MAX_TOP_K = 100
MAX_TIMEOUT = 1e7  # seconds (four months)
MIN_TUNED = 2  # pycma's CMA-ES needs at least two dimensions
# Game results a run holds at once (about 350 bytes each in the driver, as many again in Ray's
# object store): a generation's (popsize, doubled by every restart, times games), or the final
# validation's ((top_k + 1) times validation games).
MAX_GAMES_AT_ONCE = 1_000_000
# A smaller first step than this, on a box mapped onto [0, 1], is below what pycma resolves: the
# search stops at once (tolx), or at 5e-324 fails inside pycma after the first generation.
MIN_SIGMA0 = 1e-6
MAX_NAME_BYTES = 255  # a folder name, on the usual file systems (NAME_MAX)
MAX_SPEC = 256  # characters of a family spec
ADAPTIVE_KEYS = ("min", "max", "batch", "confidence", "tolerance")
MIN_ADAPTIVE_GAMES = 2  # a standard error needs two games
SCALES = ("linear", "log")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
AUTO = "auto"
LOCAL = "local"  # ray.address: an embedded Ray on this machine, as null says


def is_address(address: object) -> bool:
    """Whether ``address`` names a Ray cluster: 'auto', or HOST:PORT with a port 1 to 65535."""
    return isinstance(address, str) and bool(ADDRESS_PATTERN.match(address)) and (
        address == "auto" or 0 < int(address.rsplit(":", 1)[1]) < 65536)
