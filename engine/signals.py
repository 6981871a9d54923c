"""Ctrl-C and SIGTERM held back while numba loads or compiles code, and delivered right after.

numba loads compiled code through callbacks from LLVM into Python (ctypes callbacks such as
llvmlite's ``_raw_object_cache_notify``). A signal handler that raises inside one cannot stop it:
Python prints "Exception ignored on calling ctypes callback function" and goes on, and the
Ctrl-C is lost. So the engine loads its kernels inside ``deferred_interrupts``.
"""

from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def deferred_interrupts():
    """Hold SIGINT and SIGTERM during the block; deliver the first that came once it ends.

    Only Python-level handlers are swapped (SIG_DFL and SIG_IGN stay as they are), and only in
    the main thread, the one that runs them. The signal is delivered again with
    ``signal.raise_signal`` once the handlers are back, so whichever handler is installed acts on
    it as it would have: Python's own raises ``KeyboardInterrupt``, ``tune``'s raises its own
    interrupt, and an enclosing hold (this one or ``tuner.interrupts.held``) keeps it in turn.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in SIGNALS:
        if callable(signal.getsignal(sig)):
            previous[sig] = signal.signal(sig, lambda signum, _frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])
