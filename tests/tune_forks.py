"""``tune`` commands run in forks of one warm process, for the suite's many short commands.

A command in a fresh interpreter spends 0.3 to 1 s starting Python and importing the engine and
the tuner before it does anything; the suite runs hundreds. A ``TuneForks`` server is one
interpreter, started once per test process with the import path a subprocess would have, that
has imported the engine, the tuner and their dependencies (never Ray) and loaded the engine's
compiled kernels. Each command is a fork of it: a process of its own, run in the given working
directory with the given environment, its output in files, its exit status as the process's own
(a signal's death included), exactly what ``subprocess.run`` of ``tune`` gives a test. What a
command changes (modules patched by a prelude, signal handlers, Ray started) dies with its fork.

What differs from a fresh interpreter, so what stays on real subprocesses: anything about start-up
itself (which modules a command imports, Ctrl-C while it imports), ``python -c``'s and ``-m``'s
working directory first on the import path (the ``tune`` command has no such entry either), and
commands interrupted from outside.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# The server: read a request a line, fork, run it, write the pid then the wait status. It has
# no thread of its own when it forks (the engine's imports start none), so a fork is whole.
SERVER = r"""
import json, os, signal, sys, traceback
import numpy, yaml, cma, numba
import engine, engine.solver, tuner.cli.main, tuner.config, tuner.loop.run
import tuner.cli.job, tuner.cli.play, tuner.cli.compare, tuner.analysis.noise, tuner.analysis.report
engine.solver.Solver("classic", depth=1).best_move(0x1100)  # the compiled kernels, loaded once
requests, replies = os.fdopen(0, "r"), os.fdopen(os.dup(1), "w")
sys.stdout.flush()


def child(request):
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, name, flags in ((0, os.devnull, os.O_RDONLY),
                            (1, request["stdout"], os.O_WRONLY),
                            (2, request["stderr"], os.O_WRONLY)):
        opened = os.open(name, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdout.reconfigure(write_through=True)
    sys.stderr.reconfigure(write_through=True)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.argv = ["tune", *request["args"]]
    code = 1
    try:
        namespace = {"__name__": "__main__"}
        for prelude in request["preludes"]:
            exec(compile(prelude, "<prelude>", "exec"), namespace)
        code = tuner.cli.main.main()
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if not isinstance(exit.code, int | None):
            print(exit.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
    finally:
        import atexit
        atexit._run_exitfuncs()  # what the interpreter does at its end: Ray's shutdown, say
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code if isinstance(code, int) else 1)


for line in requests:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        replies.close()
        child(request)
    replies.write(json.dumps({"pid": pid}) + "\n")
    replies.flush()
    _, status = os.waitpid(pid, 0)
    replies.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")
    replies.flush()
"""


class TuneForks:
    """A server of forks with ``sys.path`` as ``PYTHONPATH=paths`` gives a fresh interpreter."""

    def __init__(self, paths: list[str], scratch: Path):
        self.paths, self.scratch = paths, scratch
        self.server = subprocess.Popen([sys.executable, "-c", SERVER], env=self.environment(),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       bufsize=0, cwd=scratch)

    def environment(self, **extra: str) -> dict[str, str]:
        """This process's environment with the server's import path, as a subprocess gets it."""
        return {**os.environ, "PYTHONPATH": os.pathsep.join(self.paths), **extra}

    def run(self, args: list[str], cwd: Path, env: dict[str, str], preludes: tuple[str, ...] = (),
            timeout: float = 300) -> subprocess.CompletedProcess:
        """``tune ARGS`` in a fork, as ``subprocess.run`` with ``capture_output`` and ``text``
        gives it (``subprocess.TimeoutExpired`` past ``timeout`` seconds, the fork killed)."""
        args = [str(arg) for arg in args]
        out_fd, out_path = tempfile.mkstemp(dir=self.scratch, suffix=".out")
        err_fd, err_path = tempfile.mkstemp(dir=self.scratch, suffix=".err")
        os.close(out_fd)
        os.close(err_fd)
        try:
            request = json.dumps({"args": args, "cwd": str(cwd), "env": env,
                                  "preludes": list(preludes), "stdout": out_path,
                                  "stderr": err_path}) + "\n"
            os.write(self.server.stdin.fileno(), request.encode())  # a pipe takes it whole
            pid = self._reply(timeout)["pid"]
            try:
                status = self._reply(timeout)["status"]
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                self._reply(timeout)
                raise
            return subprocess.CompletedProcess(
                ["tune", *args], status, Path(out_path).read_text(encoding="utf-8"),
                Path(err_path).read_text(encoding="utf-8"))
        finally:
            os.unlink(out_path)
            os.unlink(err_path)

    def _reply(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.server.stdout], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired("tune", timeout)
        line = self.server.stdout.readline()  # unbuffered: what select saw is all there is
        if not line:
            raise RuntimeError(f"the fork server ended (exit status {self.server.wait()})")
        return json.loads(line)

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait(timeout=60)
