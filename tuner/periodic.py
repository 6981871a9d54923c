"""A file rewritten whole as results come back (a comparison's kept games), written at once
the first time, then at most every ``WRITE_EVERY_SECONDS``, and on ``flush`` whatever came since:
rewriting it for each of thousands of small units costs the driver more than the games cost their
workers, and a process killed outright loses at most the last interval."""

from __future__ import annotations

import time
from collections.abc import Callable

WRITE_EVERY_SECONDS = 30.0


class PeriodicWrite:
    """Calls ``write`` when results have changed and it is due (``changed``), or now (``flush``)."""

    def __init__(self, write: Callable[[], None]):
        self._write = write
        self._written: float | None = None  # never: the first results are written at once
        self._pending = False

    def changed(self) -> None:
        """Results came back: write them if the file was last written long enough ago."""
        self._pending = True
        if self._written is None or time.monotonic() - self._written >= WRITE_EVERY_SECONDS:
            self.flush()

    def flush(self) -> None:
        """Write what came since the last write (nothing new: nothing is written)."""
        if self._pending:
            self._write()
            self._written, self._pending = time.monotonic(), False
