"""One external engine process: started, greeted, asked for games, ended.

Every wait on the engine has a deadline (the handshake's, a game's), so a hung engine costs a
timeout, never a hung tune. Whatever goes wrong (the engine exits, hangs, writes a line outside
the protocol, reports an error) is an ``EngineFailure`` whose one line names the engine, the
request and the engine's last lines on stderr. The engine runs with the arguments given, in the
directory given; nothing it writes is run or used as a path.
"""

from __future__ import annotations

import collections
import os
import selectors
import shlex
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Self

from engine.errors import BadInput, Failure
from engine.external import protocol
from engine.external.protocol import GameResult, ProtocolError, Search

STDERR_LINES = 5  # of the engine's stderr, quoted in a failure
QUIT_SECONDS = 2.0  # an engine asked to quit has this long before it is killed


class EngineFailure(Failure):
    """An external engine failed a request: it exited, hung, broke the protocol or said why."""


class EngineProcess:
    """An engine started from ``command`` (a list: program and arguments) in ``cwd``."""

    def __init__(self, command: list[str], cwd: Path | None = None, *,
                 handshake_timeout: float = 10.0, game_timeout: float = 60.0):
        if not command:
            raise BadInput("engine: no command given")
        self.command = list(command)
        self.label = shlex.join(self.command)
        self.game_timeout = game_timeout
        self._stderr = collections.deque(maxlen=STDERR_LINES)
        try:
            self._process = subprocess.Popen(
                self.command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, bufsize=0)
        except OSError as err:
            raise BadInput(f"engine {self.label!r}: cannot start it: {err.strerror}") from None
        self._stderr_reader = threading.Thread(target=self._keep_stderr, daemon=True)
        self._stderr_reader.start()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._process.stdout, selectors.EVENT_READ)
        self._buffer = b""
        self._request = protocol.GREETING
        try:
            self._send(protocol.GREETING)
            self.declaration = protocol.read_declaration(self._lines(handshake_timeout))
        except ProtocolError as err:
            self.close()
            raise self._failure(f"handshake: {err}") from None
        except EngineFailure:
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
            self._request = protocol.set_request(name, value)
            self._send(self._request)
            answer = self._line(self.game_timeout)
            if answer.split()[:1] == ["error"]:
                raise self._failure(f"reports an error: {answer.removeprefix('error').strip()}")
            if answer.split() != ["ok"]:
                raise self._failure(f"expected 'ok', got {answer!r}")

    def play(self, search: Search, seeds: list[int], trace: bool = False
             ) -> Iterator[tuple[GameResult, list]]:
        """Play ``seeds`` in order at ``search``, yielding each game as it ends with its
        transcript (empty unless ``trace``). Read them all before the next request: the engine
        answers one request at a time."""
        if not self.declaration.supports(search):
            raise BadInput(f"engine {self.label!r}: it does not search at {search} (it "
                           f"declares {self.declaration.searches()})")
        self._request = protocol.play_request(search, seeds, trace)
        self._send(self._request)
        for seed in seeds:
            steps = []
            while True:
                line = self._line(self.game_timeout)
                words = line.split()
                if words[:1] == ["error"]:
                    raise self._failure(f"reports an error: {line.removeprefix('error').strip()}")
                if words[:1] == ["game"]:
                    break
                if not trace:
                    raise self._failure(f"expected a 'game' line, got {line!r}")
                steps.append(self._parsed(protocol.read_step, line))
            game = self._parsed(protocol.read_game, line)
            if game.seed != seed:
                raise self._failure(f"answered seed {game.seed} where seed {seed} was next")
            yield game, steps
        line = self._line(self.game_timeout)
        if line.split() != ["done"]:
            raise self._failure(f"expected 'done' after the last game, got {line!r}")

    def close(self) -> None:
        """Ask the engine to quit; kill it if it has not within ``QUIT_SECONDS``."""
        if self._process.poll() is None:
            try:
                self._process.stdin.write(b"quit\n")
                self._process.stdin.close()
            except OSError:
                pass
            try:
                self._process.wait(QUIT_SECONDS)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._selector.close()
        self._process.stdout.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- lines --------------------------------------------------------------------------------

    def _send(self, line: str) -> None:
        try:
            self._process.stdin.write(line.encode() + b"\n")
            self._process.stdin.flush()
        except OSError:
            raise self._failure("exited before the request could be sent") from None

    def _lines(self, timeout: float) -> Iterator[str]:
        while True:
            yield self._line(timeout)

    def _line(self, timeout: float) -> str:
        """The next line, within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if len(self._buffer) > protocol.MAX_LINE:
                raise self._failure(f"wrote a line longer than {protocol.MAX_LINE:,} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                if time.monotonic() >= deadline:
                    raise self._failure(f"answered nothing within {timeout:g} s")
                continue
            chunk = os.read(self._process.stdout.fileno(), 65536)
            if not chunk:
                raise self._failure(self._exit_text())
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\n")
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
        if self._process.poll() is not None:
            self._stderr_reader.join(timeout=1.0)  # its last words, once it has exited
        said = " | ".join(self._stderr)
        tail = f"; its last stderr lines: {said}" if said else ""
        return EngineFailure(f"engine {self.label!r}: {what} (request: {self._request[:120]!r})"
                             f"{tail}")

    def _keep_stderr(self) -> None:
        for raw in self._process.stderr:
            self._stderr.append(raw.decode(errors="replace").rstrip()[:200])
        self._process.stderr.close()
