"""The head of a joined Ray cluster, watched from the driver, so that a head that dies ends the
command within seconds, in tune's words.

Ray's core ends a driver whose cluster's GCS (on the head) is gone only after
``gcs_rpc_server_reconnect_timeout_s`` (60 s), from C++, with its own message and exit status 1:
nothing in Python can catch that, and until then every call to Ray waits. So a thread connects to
the GCS's port every ``CHECK_SECONDS``; after ``LOST_AFTER`` failures in a row (refused, or no
answer within ``CHECK_SECONDS``) the head is lost. The watch's owner then says so (a job: its
lines, with the commands that resume, and ``status.json``) and the process ends with
``HeadLost.exit_code``, there and then: the main thread is waiting in Ray and cannot. What a run
keeps is as a SIGKILL would leave it: every file is written whole (atomically), so its last
checkpoint is intact.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

from tuner.errors import EvaluationError

log = logging.getLogger(__name__)

CHECK_SECONDS = 2.0
LOST_AFTER = 3  # failures in a row: a head that misses one check (a busy machine) is not lost
SETTLE_SECONDS = 5.0  # how long a failure of Ray's waits to see whether the head is going


class HeadLost(EvaluationError):
    """The head of the Ray cluster a command joined is gone: its GCS stopped answering."""

    exit_code = 75  # EX_TEMPFAIL (sysexits.h): tried again (resumed), it may well work


def head_lost_message(address: str, seconds: float) -> str:
    return (f"the Ray cluster's head at {address} was lost: it has not answered for "
            f"{seconds:.0f} s (its Ray processes ended, or its machine is down)")


class HeadWatch:
    """A thread that checks every ``CHECK_SECONDS`` that something listens at ``gcs_address``
    (HOST:PORT of the cluster's GCS), and once it has failed ``LOST_AFTER`` times in a row calls
    ``on_lost`` with a ``HeadLost`` naming ``address`` (as the user gave it), flushes the
    process's output and ends it with ``HeadLost.exit_code``. ``close`` stops it."""

    def __init__(self, gcs_address: str, address: str,
                 on_lost: Callable[[HeadLost], None] | None = None):
        host, _, port = gcs_address.rpartition(":")
        self.target = (host.strip("[]"), int(port))
        self.address = address
        self.on_lost = on_lost or _say
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="tune2048-head-watch",
                                        daemon=True)
        self._thread.start()

    def answers(self) -> bool:
        """Whether the head's GCS accepts a connection now."""
        try:
            with socket.create_connection(self.target, timeout=CHECK_SECONDS):
                return True
        except OSError:
            return False

    def settle(self) -> None:
        """Called before a failure of Ray's is reported: where the head stops answering within
        ``SETTLE_SECONDS`` (a head ended by SIGTERM ends its raylet, failing the tasks there, a
        moment before its GCS: half a second, more on a busy machine), the failure is the head's
        loss, which the watch says within ``LOST_AFTER`` checks, and ends the process: wait for
        that rather than say something else first. Returns once the head has answered for
        ``SETTLE_SECONDS``."""
        answered_since = time.monotonic()
        while not self._closed.is_set() and self._thread.is_alive():
            if not self.answers():
                self._thread.join((LOST_AFTER + 1) * CHECK_SECONDS)
                return
            if time.monotonic() - answered_since >= SETTLE_SECONDS:
                return
            time.sleep(SETTLE_SECONDS / 10)

    def close(self) -> None:
        self._closed.set()

    def _watch(self) -> None:
        failures, answered = 0, time.monotonic()
        while not self._closed.wait(CHECK_SECONDS):
            if self.answers():
                failures, answered = 0, time.monotonic()
                continue
            failures += 1
            if failures >= LOST_AFTER and not self._closed.is_set():
                self._end(HeadLost(head_lost_message(self.address,
                                                     time.monotonic() - answered)))

    def _end(self, lost: HeadLost) -> None:
        try:
            self.on_lost(lost)
        except BaseException:  # the process ends whatever the report did
            log.debug("reporting the lost head failed", exc_info=True)
            _say(lost)
        finally:
            _flush()
            os._exit(lost.exit_code)


def _say(lost: HeadLost) -> None:
    """What a command without a report of its own says (``tune compare``, ``tune play``)."""
    log.error("tune: error: %s", lost)


def _flush() -> None:
    """Every line said so far written out: ``os._exit`` flushes nothing."""
    for handler in logging.getLogger("tuner").handlers:
        handler.flush()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
