"""Progress bars that count games: games done of the total, games/s and time left.

A generation's bar counts all its games (the first ones and every race round). Under
adaptive games (``tuner.games.budget``) its total is not known in advance: the bar counts up to every
candidate playing ``max`` games ("of up to N games"), so its time left is an upper bound, and the
race usually ends before the bar is full.
"""

from __future__ import annotations

from tqdm import tqdm

from engine.stats import readable

_TIMES = "[{elapsed} elapsed, {remaining} left, {speed}]"
FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n:,}/{total:,} games " + _TIMES
UP_TO_FORMAT = ("{desc}: {percentage:3.0f}%|{bar}| {n:,} of up to {total:,} games "
                + _TIMES.replace("{remaining}", "at most {remaining}"))


class GameBar(tqdm):
    """A bar counting games, its numbers as people read them (1,536 games, 452 games/s), that
    leaves no line behind. ``up_to``: the total is an upper bound (a race)."""

    def __init__(self, desc: str, total: int, *, up_to: bool = False, enabled: bool = True,
                 file=None):
        super().__init__(total=total, desc=desc, leave=False, disable=not enabled, file=file,
                         bar_format=UP_TO_FORMAT if up_to else FORMAT)

    @property
    def format_dict(self) -> dict:
        values = super().format_dict
        rate = values["rate"] or (values["n"] / values["elapsed"] if values["elapsed"] else 0)
        values["speed"] = f"{readable(rate, 3)} games/s" if rate else "? games/s"
        return values
