"""Commands run in forks of one warm process, for the suite's many short commands.

A command in a fresh interpreter spends 0.3 to 1 s starting Python and importing the engine and
the tuner before it does anything; the suite runs hundreds. A ``Forks`` server is one
interpreter, started with the import path a subprocess would have, that has run a warm-up (its
imports) once. Each command is a fork of it: a process of its own, run in the given working
directory with the given environment, its output in files, its exit status as the process's own
(a signal's death included), exactly what ``subprocess.run`` gives a test. What a command changes
(modules patched by a prelude, signal handlers, Ray started) dies with its fork.

``TuneForks`` runs ``tune``: its server, one per test process and import path, has imported the
engine, the tuner and their dependencies (never Ray) and loaded the engine's compiled kernels.

What differs from a fresh interpreter, so what stays on real subprocesses: anything about start-up
itself (which modules a command imports, Ctrl-C while it imports), ``python -c``'s and ``-m``'s
working directory first on the import path (the ``tune`` command has no such entry either), and
a ``tune`` a test interrupts (Ctrl-C in its own process group, Ray's processes among them).
"""

from __future__ import annotations

import dataclasses
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# The server: run the warm-up, then read a request a line, fork, run it, write the pid then the
# wait status. It has no thread of its own when it forks (the engine's imports start none), so a
# fork is whole. Ctrl-C and SIGTERM are held in a fork until its script lets them in
# (RELEASE_SIGNALS): one sent as soon as the pid is known waits for the script instead of falling
# in the fork's own start. A fork that has ended stays a zombie until the next request, so that a
# test may signal its pid until it has read the status, never another process's. A fork runs its
# scripts one after another as ``python -c`` runs one: in a module named __main__, with
# ``sys.argv`` set, its exit status what ``sys.exit`` gave.
SERVER = r"""
import json, os, signal, sys, traceback
{warm}
signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGINT, signal.SIGTERM}})
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
    sys.argv = request["argv"]
    code = 0
    try:
        namespace = {{"__name__": "__main__"}}
        for script in request["scripts"]:
            exec(compile(script, "<string>", "exec"), namespace)
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if not isinstance(exit.code, int | None):
            print(exit.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        import atexit
        atexit._run_exitfuncs()  # what the interpreter does at its end: Ray's shutdown, say
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


ended = None
for line in requests:
    if ended is not None:
        os.waitpid(ended, 0)  # reaped only now: until its client asks for more, its pid is its own
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        replies.close()
        child(request)
    replies.write(json.dumps({{"pid": pid}}) + "\n")
    replies.flush()
    end = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    status = end.si_status if end.si_code == os.CLD_EXITED else -end.si_status
    replies.write(json.dumps({{"status": status}}) + "\n")
    replies.flush()
    ended = pid
"""

# What a ``tune`` fork's server has loaded: the engine, the tuner and their dependencies (never
# Ray), and the compiled kernels.
TUNE_WARM = """
import numpy, yaml, cma, numba
import engine, engine.solver, tuner.cli.main, tuner.config, tuner.loop.run
import tuner.cli.job, tuner.cli.play, tuner.cli.compare, tuner.analysis.noise, tuner.analysis.report
engine.solver.Solver("classic", depth=1).best_move(0x1100)  # the compiled kernels, loaded once
"""
RELEASE_SIGNALS = ("import signal\n"
                   "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})\n")
TUNE_MAIN = "import sys, tuner.cli.main\nsys.exit(tuner.cli.main.main())"


@dataclasses.dataclass(frozen=True)
class Fork:
    """A command started in a fork, not yet waited for."""

    pid: int
    argv: list[str]
    stdout: Path
    stderr: Path


class Forks:
    """A server of forks of a process that has run ``warm``, with ``sys.path`` as
    ``PYTHONPATH=paths`` gives a fresh interpreter; one fork at a time."""

    def __init__(self, warm: str, paths: list[str], scratch: Path, python_options=()):
        self.paths, self.scratch = paths, scratch
        self.server = subprocess.Popen(
            [sys.executable, *python_options, "-c", SERVER.format(warm=warm)],
            env=self.environment(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0,
            cwd=scratch)

    def environment(self, **extra: str) -> dict[str, str]:
        """This process's environment with the server's import path, as a subprocess gets it."""
        return {**os.environ, "PYTHONPATH": os.pathsep.join(self.paths), **extra}

    def start(self, scripts: list[str], argv: list[str], cwd: Path, env: dict[str, str],
              timeout: float = 300) -> Fork:
        """A fork running ``scripts`` with ``sys.argv`` as ``argv``, once it has its pid; Ctrl-C
        and SIGTERM are held until a script lets them in (``RELEASE_SIGNALS``)."""
        argv = [str(arg) for arg in argv]
        out_fd, out_path = tempfile.mkstemp(dir=self.scratch, suffix=".out")
        err_fd, err_path = tempfile.mkstemp(dir=self.scratch, suffix=".err")
        os.close(out_fd)
        os.close(err_fd)
        request = json.dumps({"scripts": scripts, "argv": argv, "cwd": str(cwd), "env": env,
                              "stdout": out_path, "stderr": err_path}) + "\n"
        os.write(self.server.stdin.fileno(), request.encode())  # a pipe takes it whole
        return Fork(self._reply(timeout)["pid"], argv, Path(out_path), Path(err_path))

    def finish(self, fork: Fork, timeout: float = 300) -> subprocess.CompletedProcess:
        """What ``subprocess.run`` with ``capture_output`` and ``text`` gives for the fork
        (``subprocess.TimeoutExpired`` past ``timeout`` seconds, the fork killed)."""
        try:
            try:
                status = self._reply(timeout)["status"]
            except subprocess.TimeoutExpired:
                os.kill(fork.pid, signal.SIGKILL)
                self._reply(timeout)
                raise
            return subprocess.CompletedProcess(fork.argv, status,
                                               fork.stdout.read_text(encoding="utf-8"),
                                               fork.stderr.read_text(encoding="utf-8"))
        finally:
            fork.stdout.unlink()
            fork.stderr.unlink()

    def _reply(self, timeout: float) -> dict:
        ready, _, _ = select.select([self.server.stdout], [], [], timeout)
        if not ready:
            raise subprocess.TimeoutExpired(self.server.args, timeout)
        line = self.server.stdout.readline()  # unbuffered: what select saw is all there is
        if not line:
            raise RuntimeError(f"the fork server ended (exit status {self.server.wait()})")
        return json.loads(line)

    def close(self) -> None:
        self.server.stdin.close()
        self.server.wait(timeout=60)


class TuneForks(Forks):
    """Forks that run ``tune``, from a server that has loaded what ``tune`` needs."""

    def __init__(self, paths: list[str], scratch: Path):
        super().__init__(TUNE_WARM, paths, scratch)

    def run(self, args: list[str], cwd: Path, env: dict[str, str], preludes: tuple[str, ...] = (),
            timeout: float = 300) -> subprocess.CompletedProcess:
        """``tune ARGS`` in a fork, as ``subprocess.run`` with ``capture_output`` and ``text``
        gives it, after the ``preludes`` (code of the test's) in the same module."""
        fork = self.start([RELEASE_SIGNALS, *preludes, TUNE_MAIN], ["tune", *args], cwd, env,
                          timeout)
        return self.finish(fork, timeout)
