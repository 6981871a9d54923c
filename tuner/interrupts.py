"""Ctrl-C and SIGTERM for the tuning job, remembered as well as raised.

Python raises ``KeyboardInterrupt`` wherever the main thread happens to be, and code that must not
raise drops it there: a finalizer (a Ray ``ObjectRef`` collected in the middle of numba's work), a
compiled module being imported. Python prints such an exception as "Exception ignored" and goes
on, and the run went on to its end. So the handlers also remember the signal, the loop checks
between generations (``check``), and a dropped ``KeyboardInterrupt`` is not printed: it is not
lost. Files that must land together are written inside ``deferred``: a signal that comes while
they are written is raised once they all are.
"""

from __future__ import annotations

import contextlib
import signal
import sys

_received: list[int] = []
_deferring = False


def install() -> None:
    """Handle Ctrl-C and SIGTERM alike from now on, in this (main) thread's process."""
    _received.clear()
    signal.signal(signal.SIGINT, _record)
    signal.signal(signal.SIGTERM, _record)
    sys.unraisablehook = _unraisable


def check() -> None:
    """Raise ``KeyboardInterrupt`` if Ctrl-C or SIGTERM came since ``install``, even if the one
    raised then was dropped."""
    if _received:
        raise KeyboardInterrupt(_reason(_received[-1]))


@contextlib.contextmanager
def deferred():
    """Ctrl-C and SIGTERM are remembered, not raised, during the block, and raised at its end:
    a generation's history row, best weights and checkpoint are written all or none."""
    global _deferring
    outer = _deferring
    _deferring = True
    try:
        yield
    finally:
        _deferring = outer
    if not outer:
        check()


def _record(signum, frame) -> None:
    _received.append(signum)
    if not _deferring:
        raise KeyboardInterrupt(_reason(signum))


def _reason(signum: int) -> str:
    return "SIGTERM" if signum == signal.SIGTERM else ""


def _unraisable(unraisable) -> None:
    if issubclass(unraisable.exc_type, KeyboardInterrupt) and _received:
        return  # remembered: check() raises it again where it can be handled
    sys.__unraisablehook__(unraisable)
