"""One external engine process: started, greeted, asked for games, ended.

Every exchange with the engine has a deadline on the whole of it, reading and writing alike:
the handshake ``HANDSHAKE_SECONDS`` from the greeting to ``ready``, each game the game timeout
from its request (or the end of the game before) to its result line, however steadily the
engine writes. A hung, trickling or deaf engine costs a timeout, never a hung tune.

The engine runs in a session of its own, so that ending it ends whatever it started: an engine
behind a launcher (a shell script, ``env``, a wrapper that forks) leaves no process behind when
it is closed, fails, is interrupted, or is dropped unclosed (its finalizer, also at exit).

Whatever goes wrong (the engine exits, hangs, writes a line outside the protocol, reports an
error) is an ``EngineFailure`` whose one line names the engine, the request and the engine's
last lines on stderr; the engine is ended with it. The engine runs with the arguments given, in
the directory given; nothing it writes is run or used as a path.
"""

from __future__ import annotations

import collections
import os
import selectors
import shlex
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Self

from engine.errors import BadInput, Failure
from engine.external import protocol
from engine.external.protocol import GameResult, ProtocolError, Search

STDERR_LINES = 5  # of the engine's stderr, quoted in a failure
HANDSHAKE_SECONDS = 10.0  # from the greeting to 'ready' (docs/engine-protocol.md)
QUIT_SECONDS = 2.0  # an idle engine asked to quit has this long to exit
TERM_SECONDS = 1.0  # then what is left of its session, after SIGTERM, before SIGKILL
POLL_SECONDS = 0.02  # between looks at a session being ended
# The most one wait for the engine lasts: a later deadline is waited for in turns (a poll takes
# no timeout much past 24 days, and a game may be given up to 1e7 seconds).
WAIT_SECONDS = 3600.0


class EngineFailure(Failure):
    """An external engine failed a request: it exited, hung, broke the protocol or said why."""


class EngineProcess:
    """An engine started from ``command`` (a list: program and arguments) in ``cwd``; the
    handshake has ``handshake_timeout`` seconds (default ``HANDSHAKE_SECONDS``), each game
    ``game_timeout``."""

    def __init__(self, command: list[str], cwd: Path | None = None, *,
                 handshake_timeout: float | None = None, game_timeout: float = 60.0):
        if not command:
            raise BadInput("engine: no command given")
        self.command = list(command)
        self.label = shlex.join(self.command)
        self.game_timeout = game_timeout
        self._stderr = collections.deque(maxlen=STDERR_LINES)
        try:
            self._process = subprocess.Popen(
                self.command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0, start_new_session=True)
        except OSError as err:
            raise BadInput(f"engine {self.label!r}: cannot start it: {err.strerror}") from None
        self._end = weakref.finalize(self, end_session, self._process)
        self._failed: str | None = None  # the failure that ended it
        self._busy = False  # a request is out and its answer not read in full
        self._stderr_reader = threading.Thread(target=_keep_lines, daemon=True,
                                               args=(self._process.stderr, self._stderr))
        self._stderr_reader.start()
        os.set_blocking(self._process.stdin.fileno(), False)  # a write waits only as a read does
        self._readable = selectors.DefaultSelector()
        self._readable.register(self._process.stdout, selectors.EVENT_READ)
        self._writable = selectors.DefaultSelector()
        self._writable.register(self._process.stdin, selectors.EVENT_WRITE)
        self._buffer = b""  # the start of a line not yet ended
        self._ready: collections.deque[bytes] = collections.deque()  # lines read, not yet taken
        self._request = protocol.GREETING
        seconds = HANDSHAKE_SECONDS if handshake_timeout is None else handshake_timeout
        deadline = time.monotonic() + seconds
        late = f"did not finish its handshake within {seconds:g} s"
        try:
            self._send(protocol.GREETING, deadline, late)
            self.declaration = protocol.read_declaration(self._lines(deadline, late))
            self._busy = False
        except ProtocolError as err:
            self.close()
            raise self._failure(f"handshake: {err}") from None
        except BaseException:  # its failure, or Ctrl-C while it starts
            self.close()
            raise

    def set_values(self, values: dict[str, float]) -> None:
        """Set parameters for the games that follow; each must be one the engine declared."""
        declared = {param.name: param for param in self.declaration.params}
        for name, value in values.items():
            if name not in declared:
                raise BadInput(f"engine {self.label!r}: no parameter named {name!r} (it "
                               f"declares {', '.join(declared) or 'none'})")
            if declared[name].kind == "int":
                value = round(value)
            deadline = time.monotonic() + self.game_timeout
            late = f"did not answer within {self.game_timeout:g} s"
            self._send(protocol.set_request(name, value), deadline, late)
            answer = self._line(deadline, late)
            self._busy = False
            if answer.split()[:1] == ["error"]:
                raise self._failure(f"reports an error: {answer.removeprefix('error').strip()}")
            if answer.split() != ["ok"]:
                raise self._failure(f"expected 'ok', got {answer!r}")

    def play(self, search: Search, seeds: list[int], trace: bool = False
             ) -> Iterator[tuple[GameResult, list]]:
        """Play ``seeds`` in order at ``search``, yielding each game as it ends with its
        transcript (empty unless ``trace``). Read them all before the next request: the engine
        answers one request at a time. Many seeds go in several requests, each a line of at
        most ``protocol.MAX_LINE`` characters."""
        if not self.declaration.supports(search):
            raise BadInput(f"engine {self.label!r}: it does not search at {search} (it "
                           f"declares {self.declaration.searches()})")
        for request, part in protocol.play_requests(search, seeds, trace):
            deadline = time.monotonic() + self.game_timeout
            self._send(request, deadline, self._late(f"the game with seed {part[0]}"))
            for seed in part:
                late = self._late(f"the game with seed {seed}")
                steps = []
                while True:
                    line = self._line(deadline, late)
                    words = line.split()
                    if words[:1] == ["error"]:
                        raise self._failure(
                            f"reports an error: {line.removeprefix('error').strip()}")
                    if words[:1] == ["game"]:
                        break
                    if not trace:
                        raise self._failure(f"expected a 'game' line, got {line!r}")
                    steps.append(self._parsed(protocol.read_step, line))
                game = self._parsed(protocol.read_game, line)
                if game.seed != seed:
                    raise self._failure(f"answered seed {game.seed} where seed {seed} was next")
                yield game, steps
                deadline = time.monotonic() + self.game_timeout  # the next game's, or 'done'
            line = self._line(deadline, f"did not say 'done' within {self.game_timeout:g} s "
                                        "of its last game")
            if line.split() != ["done"]:
                raise self._failure(f"expected 'done' after the last game, got {line!r}")
            self._busy = False

    def close(self) -> None:
        """Ask an idle engine to quit, and give it ``QUIT_SECONDS``; then end whatever is left
        of its session (at once for an engine that failed or is mid-answer)."""
        if self._end.alive:
            if self._failed is None and not self._busy and self._process.poll() is None:
                try:
                    os.write(self._process.stdin.fileno(), b"quit\n")
                except OSError:
                    pass  # it stopped reading, or exited: ended below either way
                try:
                    self._process.stdin.close()  # its input ends: an engine exits there too
                    self._process.wait(QUIT_SECONDS)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._end()
        for each in (self._readable, self._writable, self._process.stdout,
                     self._process.stdin):
            try:
                each.close()
            except OSError:
                pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- lines --------------------------------------------------------------------------------

    def _late(self, what: str) -> str:
        return f"did not finish {what} within {self.game_timeout:g} s (the game timeout)"

    def _send(self, line: str, deadline: float, late: str) -> None:
        """Write a request by ``deadline``: an engine that stops reading its input fails as one
        that stops answering (``late`` says how)."""
        if self._failed is not None:
            raise EngineFailure(self._failed)  # ended: it answers nothing more
        self._request, self._busy = line, True
        data = (line + "\n").encode()
        while data:
            try:
                data = data[os.write(self._process.stdin.fileno(), data):]
            except BlockingIOError:
                pass
            except OSError:
                raise self._failure("exited before the request could be sent") from None
            if data:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise self._failure(f"{late}: it stopped reading its input")
                self._writable.select(min(left, WAIT_SECONDS))

    def _lines(self, deadline: float, late: str) -> Iterator[str]:
        while True:
            yield self._line(deadline, late)

    def _line(self, deadline: float, late: str) -> str:
        """The next line, by ``deadline`` (``late`` says what did not come in time)."""
        while not self._ready:
            if len(self._buffer) > protocol.MAX_LINE:
                raise self._failure(f"wrote a line longer than {protocol.MAX_LINE:,} bytes")
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._failure(late)
            if not self._readable.select(min(left, WAIT_SECONDS)):
                continue
            chunk = os.read(self._process.stdout.fileno(), 65536)
            if not chunk:
                raise self._failure(self._exit_text())
            *lines, self._buffer = (self._buffer + chunk).split(b"\n")
            self._ready.extend(lines)
        raw = self._ready.popleft()
        try:
            return raw.decode().removesuffix("\r")
        except UnicodeDecodeError:
            raise self._failure(f"wrote a line that is not UTF-8: {raw[:80]!r}") from None

    def _parsed(self, read, line: str):
        try:
            return read(line)
        except ProtocolError as err:
            raise self._failure(str(err)) from None

    def _exit_text(self) -> str:
        try:
            code = self._process.wait(QUIT_SECONDS)
        except subprocess.TimeoutExpired:
            return "closed its output"
        return f"exited with status {code}" if code >= 0 else f"was killed by signal {-code}"

    def _failure(self, what: str) -> EngineFailure:
        """The failure, in one line; the engine is ended with it (its state is unknown)."""
        self._end()
        self._stderr_reader.join(timeout=1.0)  # its last words, now that it has ended
        said = " | ".join(self._stderr)
        tail = f"; its last stderr lines: {said}" if said else ""
        self._failed = (f"engine {self.label!r}: {what} (request: {self._request[:120]!r})"
                        f"{tail}")
        return EngineFailure(self._failed)


def _keep_lines(stream, kept: collections.deque) -> None:
    """The engine's stderr, read to its end; the last lines kept (a thread holding no reference
    to the engine's object, so that dropping it ends the engine)."""
    for raw in stream:
        kept.append(raw.decode(errors="replace").rstrip()[:200])
    stream.close()


def end_session(process: subprocess.Popen) -> None:
    """End every process of the session ``process`` leads (it, and what it started: the engine
    behind a launcher): SIGTERM, then SIGKILL to what is left after ``TERM_SECONDS``."""
    session = process.pid  # its process group's id too
    if process.poll() is not None and not session_running(session):
        return
    _signal(session, signal.SIGTERM)
    deadline = time.monotonic() + TERM_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None and not session_running(session):
            return
        time.sleep(POLL_SECONDS)
    _signal(session, signal.SIGKILL)
    try:
        process.wait(TERM_SECONDS)
    except subprocess.TimeoutExpired:
        pass  # not even SIGKILL ended it yet (a process stuck in the kernel): nothing more to do


def session_running(group: int) -> bool:
    """Whether a process of the process group ``group`` still runs. A zombie does not: one
    whose parent has exited waits for its reaper, which some containers' first process never
    is."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return True  # no /proc to tell a zombie by: it counts as running
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                # after the name in parentheses: state, parent, process group
                state, _, pgrp = stat.read().rpartition(b")")[2].split()[:3]
        except (OSError, ValueError):
            continue  # it ended while we looked
        if int(pgrp) == group and state not in (b"Z", b"X"):
            return True
    return False


def _signal(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):
        pass
