"""How a command shows games being played, and any other wait: no command is silent for more
than a few seconds, on a terminal or not.

On a terminal, a phase of games is a bar (tqdm): games done of the total, games/s and time left.
Off one (a log file, ``nohup``) a bar would be carriage returns that a log keeps as one garbled
line: there the same figures are plain lines, the first once the phase has lasted
``FIRST_LINE_SECONDS`` and then one every ``LINE_SECONDS`` while its games go on, from a thread
of their own, so that a phase whose games take minutes each is still heard from. A phase shorter
than that shows no line: the command says its end anyway (a generation's line, a report).

A generation's bar counts all its games (the first ones and every race round). Under adaptive
games (``tuner.games.budget``) its total is not known in advance: the bar counts up to every
candidate playing ``max`` games ("of up to N games"), so its time left is an upper bound, and
the race usually ends before the bar is full.

A wait with nothing to count (numba compiling the engine, Ray starting, games timed to price a
run) is said once it has lasted ``SAY_AFTER_SECONDS`` (``said_if_slow``).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Self

from tqdm import tqdm

from engine.stats import clock, readable

log = logging.getLogger(__name__)

_TIMES = "[{elapsed} elapsed, {remaining} left, {speed}]"
FORMAT = "{desc}: {percentage:3.0f}%|{bar}| {n:,}/{total:,} games " + _TIMES
UP_TO_FORMAT = ("{desc}: {percentage:3.0f}%|{bar}| {n:,} of up to {total:,} games "
                + _TIMES.replace("{remaining}", "at most {remaining}"))
SAY_AFTER_SECONDS = 3.0  # a wait said after this long is said within 5 s of its start
FIRST_LINE_SECONDS = 4.0  # off a terminal: a phase's first line, once it has lasted this long
LINE_SECONDS = 60.0  # then one line this often
WAKE_SECONDS = 0.5  # how often the lines' thread looks at the clock


class GameBar:
    """Games counted as they finish, their numbers as people read them (1,536 games, 452
    games/s): a bar that leaves no line behind on a terminal, plain lines off one (``terminal``:
    None tells from ``file``, stderr by default); nothing when not ``enabled`` (``--quiet``).
    ``up_to``: the total is an upper bound (a race). ``clock``: a test's own monotonic clock;
    with one, lines come only as games are counted or ``tick`` is called (no thread waits on
    the clock). ``update`` is safe to hand on as a callback; close the bar when its games end
    (or use it as a context manager)."""

    def __init__(self, desc: str, total: int, *, up_to: bool = False, enabled: bool = True,
                 file: IO[str] | None = None, terminal: bool | None = None,
                 clock: Callable[[], float] | None = None):
        stream = file if file is not None else sys.stderr
        self.terminal = is_terminal(stream) if terminal is None else terminal
        self._shown: _Bar | _Lines | None = None
        if enabled:
            self._shown = (_Bar(desc, total, up_to, stream) if self.terminal else
                           _Lines(desc, total, up_to, stream, clock))

    @property
    def n(self) -> int:
        return self._shown.n if self._shown is not None else 0

    def update(self, count: int = 1) -> None:
        if self._shown is not None:
            self._shown.update(count)

    def found(self, count: int) -> None:
        """``count`` games done before this phase's games began (kept from an earlier sitting):
        counted, but not in the games per second."""
        if self._shown is not None:
            self._shown.found(count)

    def set_description_str(self, desc: str) -> None:
        """The games go on under a new name (a race's next round)."""
        if self._shown is not None:
            self._shown.set_description_str(desc)

    def refresh(self) -> None:
        """Show the count now: the bar redrawn, or a line written."""
        if self._shown is not None:
            self._shown.refresh()

    def tick(self) -> None:
        """Off a terminal, a line if one is due (the lines' thread calls this)."""
        if isinstance(self._shown, _Lines):
            self._shown.tick()

    def close(self) -> None:
        if self._shown is not None:
            self._shown.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal (a closed or odd stream is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


class _Bar(tqdm):
    """The terminal's bar: tqdm, its speed in games/s as people read it."""

    def __init__(self, desc: str, total: int, up_to: bool, stream: IO[str]):
        super().__init__(total=total, desc=desc, leave=False, file=stream,
                         bar_format=UP_TO_FORMAT if up_to else FORMAT)

    def found(self, count: int) -> None:
        self.initial += count  # tqdm's rate counts from ``initial``
        self.n += count
        self.last_print_n = self.n
        self.refresh()

    @property
    def format_dict(self) -> dict:
        values = super().format_dict
        elapsed, played = values["elapsed"], values["n"] - values["initial"]
        rate = values["rate"] or (played / elapsed if elapsed else 0)
        values["speed"] = f"{readable(rate, 3)} games/s" if rate else "? games/s"
        return values


class _Lines:
    """Off a terminal: a line of the count once the phase has lasted ``FIRST_LINE_SECONDS``,
    then every ``LINE_SECONDS``, whether or not games finish meanwhile."""

    def __init__(self, desc: str, total: int, up_to: bool, stream: IO[str],
                 clock: Callable[[], float] | None):
        self.desc, self.total, self.up_to, self.stream = desc, total, up_to, stream
        self.n = 0
        self.kept = 0  # of ``n``, those found kept (``found``): not in the games per second
        self._clock = clock or time.monotonic
        self.started = self._clock()
        self._due = self.started + FIRST_LINE_SECONDS
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread = None
        if clock is None:
            self._thread = threading.Thread(target=self._wake, name="progress lines",
                                            daemon=True)
            self._thread.start()

    def _wake(self) -> None:
        while not self._closed.wait(WAKE_SECONDS):
            self.tick()

    def update(self, count: int) -> None:
        with self._lock:
            self.n += count
        self.tick()

    def found(self, count: int) -> None:
        with self._lock:
            self.n += count
            self.kept += count

    def set_description_str(self, desc: str) -> None:
        with self._lock:
            self.desc = desc

    def tick(self) -> None:
        with self._lock:
            now = self._clock()
            if not self._closed.is_set() and now >= self._due:
                self._due = now + LINE_SECONDS
                self._write(now)

    def refresh(self) -> None:
        with self._lock:
            if not self._closed.is_set():
                self._write(self._clock())

    def close(self) -> None:
        self._closed.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()

    def _write(self, now: float) -> None:
        try:
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()
        except (OSError, ValueError):  # the stream went away (closed, a full disk): no line
            self._closed.set()

    def line(self, now: float) -> str:
        """``gen 3 of 20: 1,234 of 5,120 games (24%), 0:02:03 elapsed, 10 games/s, 0:06:28
        left``."""
        elapsed = max(now - self.started, 0.0)
        share = f" ({self.n / self.total:.0%})" if self.total else ""
        of = f"of up to {self.total:,}" if self.up_to else f"of {self.total:,}"
        parts = [f"{self.desc}: {self.n:,} {of} games{share}", f"{clock(elapsed)} elapsed"]
        rate = (self.n - self.kept) / elapsed if elapsed > 0 else 0.0
        if rate > 0:
            left = max(self.total - self.n, 0) / rate
            parts += [f"{readable(rate, 3)} games/s",
                      f"{'at most ' if self.up_to else ''}{clock(left)} left"]
        return ", ".join(parts)


@contextlib.contextmanager
def said_if_slow(line: str, seconds: float | None = None,
                 say: Callable[[str], None] | None = None) -> Iterator[None]:
    """``line`` said if the block is still running after ``seconds`` (None:
    ``SAY_AFTER_SECONDS``): logged (the terminal, and a run's ``run.log``), or given to
    ``say``. A wait that ends sooner says nothing."""
    timer = threading.Timer(SAY_AFTER_SECONDS if seconds is None else seconds, say or _logged,
                            args=(line,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _logged(line: str) -> None:
    log.info("%s", line)
