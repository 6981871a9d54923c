"""Ctrl-C and SIGTERM, handled one way for every command: remembered as well as raised, and held
back where being cut half-way would do harm.

``install`` (the ``tune`` command calls it first) makes SIGINT and SIGTERM raise ``Interrupted``,
a ``KeyboardInterrupt`` that says which signal came, and remember it. Python raises it wherever
the main thread happens to be, and code that must not raise drops it there: a finalizer (a Ray
``ObjectRef`` collected in the middle of numba's work), a compiled module being imported. Python
prints such an exception as "Exception ignored" and goes on, so the loop checks between
generations (``check``), and a dropped interrupt is not printed: it is not lost. Nor is what a
finalizer raises once a signal came: a half-made object's finalizer fails by the signal's doing.
Python 3.11 would turn one raised inside a ``__set_name__`` (while a class is made: numpy's and
numba's, as they load) into a ``RuntimeError``: there the handler raises nothing and the signal
comes again a moment later, once it lands outside.

``held`` blocks the signals for a block of code that must not be cut (Ray's import, start and
shutdown: an interrupted ``ray.init`` has crashed the driver and orphaned Ray's processes) and
hands the caller, once the block has ended, every one that came in it. ``deferred`` holds them
while a generation's files are written and raises the interrupt once they all are.

Since ``Interrupted`` is what a signal raises, a plain ``KeyboardInterrupt`` under these handlers
came from code that raised it itself (a family's own code, say), not from the keyboard.
"""

from __future__ import annotations

import _thread
import contextlib
import os
import signal
import sys
import threading
import time
from functools import cache

SIGNALS = (signal.SIGINT, signal.SIGTERM)
REDELIVERY_SECONDS = 0.001  # a signal deferred out of a class being made comes again after this

_received: list[int] = []
_deferring = False


class Interrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM arrived; ``args[0]`` is the signal's number."""

    def __str__(self) -> str:
        return signal.Signals(self.args[0]).name


def describe(interrupt: KeyboardInterrupt) -> str:
    """' (SIGTERM)' when SIGTERM is what interrupted, else '': what the last line says. The last
    signal received counts first: Ray raises a plain ``KeyboardInterrupt`` of its own for a
    signal that comes while it waits."""
    if _received:
        signum = _received[-1]
    else:
        signum = interrupt.args[0] if isinstance(interrupt, Interrupted) else None
    return " (SIGTERM)" if signum == signal.SIGTERM else ""


def install() -> None:
    """Handle Ctrl-C and SIGTERM alike from now on, in this (main) thread's process."""
    _received.clear()
    for sig in SIGNALS:
        signal.signal(sig, _record_and_raise)
    sys.unraisablehook = _unraisable


def received() -> bool:
    """Whether Ctrl-C or SIGTERM came since ``install``."""
    return bool(_received)


def check() -> None:
    """Raise ``Interrupted`` if Ctrl-C or SIGTERM came since ``install``, even if the one raised
    then was dropped."""
    if _received:
        raise Interrupted(_received[-1])


def raise_if_any(caught: list[int]) -> None:
    """Act on signals ``held`` handed back: the first ends the command as Ctrl-C does."""
    if caught:
        _received.extend(caught)
        raise Interrupted(caught[0])


@contextlib.contextmanager
def deferred():
    """Ctrl-C and SIGTERM are held during the block and raised at its end: a generation's
    history row, best weights and checkpoint are written all or none. A block nested inside
    another leaves the raising to the outer one."""
    global _deferring
    if _deferring:
        yield
        return
    _deferring = True
    try:
        with held() as caught:
            yield
    finally:
        _deferring = False
    raise_if_any(caught)
    check()


@contextlib.contextmanager
def held(signals: tuple[signal.Signals, ...] = SIGNALS):
    """Hold these signals back for the block: blocked in this thread (so they interrupt no
    system call, in it or in the threads it starts), and recorded by their handlers should one
    come through anyway (to a thread that does not block them); handlers and mask are put back
    afterwards. Processes forked meanwhile do not inherit the block.

    Yields a list that holds, once the block has ended, every signal that arrived in it (pending
    ones are taken off, so that a block nested inside cannot drop them): read it after the
    ``with`` statement, never inside, where one that comes later would be missed. What to do
    about them is the caller's (``raise_if_any``). Ignored signals stay ignored. A no-op off the
    main thread, which is the only one that runs Python's signal handlers."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    _unblock_after_fork_registered()
    previous = {}
    for sig in signals:
        if signal.getsignal(sig) not in (signal.SIG_IGN, None):
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    outer = set(_unblock_in_children)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    _unblock_in_children.update(set(signals) - mask)
    try:
        yield caught
    finally:
        for sig in set(previous) & signal.sigpending():
            if signal.sigtimedwait({sig}, 0) is not None:  # taken off the pending set
                caught.append(sig)
        caught[:] = dict.fromkeys(caught)
        _unblock_in_children.intersection_update(outer)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _record_and_raise(signum, frame) -> None:
    _received.append(signum)
    if _making_a_class(frame):
        # Python 3.11 turns what a class attribute's __set_name__ raises into RuntimeError
        # ("Error calling __set_name__"): an interrupt landing in one while a module loads
        # (numpy's cached properties, an enum's members) would end the command as a bug. The
        # signal comes again a moment later, until it lands outside; check() raises it should
        # the command end first.
        _thread.start_new_thread(_deliver_again, (signum,))
        return
    raise Interrupted(signum)


def _deliver_again(signum: int) -> None:
    """In a thread of its own: the signal again, to the main thread, once the handler that
    started this thread has returned (sent from the handler, it would run inside it)."""
    time.sleep(REDELIVERY_SECONDS)
    _thread.interrupt_main(signum)


def _making_a_class(frame) -> bool:
    """Whether ``frame`` runs inside a ``__set_name__``, which Python calls as it makes a
    class."""
    while frame is not None:
        if frame.f_code.co_name == "__set_name__":
            return True
        frame = frame.f_back
    return False


def _unraisable(unraisable) -> None:
    """Once a signal came, drop what finalizers raise: the interrupt itself (remembered, and
    raised again by ``check``) and the failures it causes, such as the finalizer of an object
    whose ``__init__`` it cut (llvmlite's, as numba loads a kernel), which finds its attributes
    missing. The command ends with the one line either way."""
    if _received:
        return
    sys.__unraisablehook__(unraisable)


_unblock_in_children: set[int] = set()  # what held() blocks now, and children must not


def _unblock_after_fork() -> None:
    """In a child just forked (by subprocess with a preexec_fn, as Ray starts its processes),
    before it runs anything: unblock what ``held`` blocks in the parent, so that Ray's processes
    have the signal mask they would have had (Ray's shutdown ends them with SIGTERM)."""
    if _unblock_in_children:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _unblock_in_children)


@cache
def _unblock_after_fork_registered() -> None:
    os.register_at_fork(after_in_child=_unblock_after_fork)
