"""Starting, joining and ending Ray for the evaluator, safely under Ctrl-C and SIGTERM.

The embedded Ray's processes listen on every interface of this machine (Ray binds no narrower), so
it always runs with Ray's token authentication: ``RAY_AUTH_MODE=token`` is set before Ray reads
its configuration, whatever the environment says, and put back when the session ends. To join a
cluster, this machine needs ``RAY_AUTH_MODE=token`` and the cluster's token (see the README): as
with Ray, the token goes to an explicit HOST:PORT only when the environment says
``RAY_AUTH_MODE=token``, while 'auto' turns it on when this machine holds a token.

Signals are the delicate part. Ray's compiled modules swallow a ``KeyboardInterrupt`` raised
while they are imported (the run then went on as if never interrupted), and one raised inside
``ray.init`` has crashed the driver and orphaned Ray's processes. So Ctrl-C and SIGTERM are held
back while Ray is imported and started, and acted on once it has returned; Ray's shutdown is never
cut half-way, and what it leaves running is ended.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import socket
import sys
import tempfile
import threading
import time
from functools import cache

from tuner.errors import EvaluationError

log = logging.getLogger(__name__)

AUTH_MODE_VAR = "RAY_AUTH_MODE"
TOKEN_SOURCES = ("the cluster's token in RAY_AUTH_TOKEN, in a file named by RAY_AUTH_TOKEN_PATH, "
                 "or in ~/.ray/auth_token")
LEFTOVER_GRACE = 1.0  # seconds a Ray process gets to end by itself after shutdown, then SIGTERM
INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


class ClusterConnectionError(EvaluationError):
    """Ray could not be started on this machine, or the cluster at an address could not be
    joined: nothing answers there, it is not a Ray cluster, or it refused this machine's
    authentication token. The message is one line and names the address."""


class RaySession:
    """Ray for one evaluator: an embedded Ray started on this machine (``address`` None, with
    ``workers`` CPUs), a cluster joined at ``address``, or the Ray this process already runs
    (left as it is, ``owns_ray`` False).

    ``runtime_env``: Ray's job-level runtime environment (what it ships to every worker, which
    it uploads at ``ray.init`` only). ``connect_timeout``: the seconds an address gets to answer
    as a Ray cluster that accepts this machine's token; past them, or on a refusal,
    ``ClusterConnectionError`` (Ray alone would retry for minutes, printing a warning a second).

    Ctrl-C or SIGTERM while Ray is imported or started: Ray is shut down and
    ``KeyboardInterrupt`` raised once ``ray.init`` returns. ``close`` finishes the shutdown
    whatever signal arrives, and ends what Ray's own shutdown leaves running.
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 runtime_env: dict | None = None, connect_timeout: float = 60.0):
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be positive, got {connect_timeout!r}")
        self._environ_before: dict[str, str | None] = {}
        self._started = False  # this session called ray.init, so close() shuts Ray down
        self._ray_roots: dict[int, str] = {}  # the processes that ray.init started
        self.owns_ray = not ray_running()
        if self.owns_ray:
            _import_ray()
            try:
                if address:
                    self._join(address, connect_timeout, runtime_env)
                else:
                    self._start(workers, runtime_env)
            except BaseException:
                self._restore_environ()
                raise
        import ray

        self.ray = ray

    def _start(self, workers: int | None, runtime_env: dict | None) -> None:
        """Start an embedded Ray on this machine, with token authentication."""
        self._set_environ(AUTH_MODE_VAR, "token")
        self._init(
            "start Ray on this machine",
            address="local",  # a fresh instance, even if another cluster runs here
            num_cpus=workers or os.cpu_count(),
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.WARNING,
            runtime_env=runtime_env,
        )

    def _join(self, address: str, timeout: float, runtime_env: dict | None) -> None:
        """Join the cluster at ``address`` ('auto': the one running on this machine)."""
        if address == "auto" and os.environ.get(AUTH_MODE_VAR) is None and _token_found():
            # What ray.init does for 'auto' by itself, done first so the probe agrees with it
            # and Ray prints no warning about it.
            self._set_environ(AUTH_MODE_VAR, "token")
        target = _bootstrap_address(address)
        if target is not None:
            _probe_cluster(target, address, timeout)
        self._init(f"join the Ray cluster at {address!r}", address=address, log_to_driver=False,
                   logging_level=logging.WARNING, runtime_env=runtime_env)

    def _init(self, what: str, **options) -> None:
        """ray.init, with Ctrl-C and SIGTERM held back until it returns (then Ray is shut down
        and KeyboardInterrupt raised) and one line for whatever else goes wrong."""
        import ray

        sigterm_handler = signal.getsignal(signal.SIGTERM)
        children_before = _children(os.getpid())
        error = None
        with _ray_sigterm_handler_kept_back() as ray_sigterm_handlers, \
                _signals_held(INTERRUPTS) as arrived:
            self._started = True
            try:
                ray.init(**options)
            except Exception as err:  # noqa: BLE001 - whatever Ray raises, one line says it
                error = ClusterConnectionError(f"could not {what}: {_first_line(err)}")
            except BaseException:
                self._shutdown(children_before)
                raise
            caught = arrived()
            if error is not None or caught:
                self._shutdown(children_before)
            else:
                self._ray_roots = _new_children(children_before)
        _raise_if_interrupted(caught)
        if error is not None:
            raise error
        if ray_sigterm_handlers and not callable(sigterm_handler) and \
                threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, ray_sigterm_handlers[-1])  # as ray.init leaves it

    def _set_environ(self, name: str, value: str) -> None:
        """Set a Ray variable for as long as this session runs Ray, and make Ray see it."""
        self._environ_before.setdefault(name, os.environ.get(name))
        os.environ[name] = value
        _reload_ray_config()

    def _restore_environ(self) -> None:
        if not self._environ_before:
            return
        for name, value in self._environ_before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._environ_before.clear()
        _reload_ray_config()

    def close(self) -> None:
        """Shut down the Ray this session started (a joined cluster keeps running). Safe to call
        twice. Ctrl-C and SIGTERM wait until the shutdown is complete and are then dropped:
        ending Ray is what they ask for, and an interrupted shutdown leaves its processes."""
        self._shutdown()

    def _shutdown(self, children_before: dict[int, str] | None = None) -> None:
        """ray.shutdown(), then end what is left of the processes this session's ray.init
        started and of their descendants (Ray gives its raylet one second before SIGKILL, which
        can orphan the raylet's agents and workers, and forgets the processes of a start-up that
        failed half-way). ``children_before``: this process's children before ray.init, when
        ray.init did not return."""
        with _signals_held(INTERRUPTS):
            if self._started:
                self._started = False
                if children_before is not None:
                    self._ray_roots = _new_children(children_before)
                processes = _descendants(self._ray_roots)
                try:
                    import ray

                    ray.shutdown()
                finally:
                    _end_leftovers(processes)
                    self._ray_roots = {}
            self._restore_environ()


def ray_running() -> bool:
    """Whether this process already runs Ray (started by someone else: a session leaves it be)."""
    ray_module = sys.modules.get("ray")
    return ray_module is not None and ray_module.is_initialized()


def _import_ray() -> None:
    """Import Ray with Ctrl-C and SIGTERM held back, then raise KeyboardInterrupt if one came:
    raised while Ray's compiled modules initialise, it is printed as "Exception ignored" and
    lost."""
    with _signals_held(INTERRUPTS) as arrived:
        import ray  # noqa: F401 - imported for its side effect, once, with signals held

        caught = arrived()
    _raise_if_interrupted(caught)


def _raise_if_interrupted(caught: list[int]) -> None:
    """Act on the signals held back: Ctrl-C or SIGTERM ends the command as Ctrl-C does."""
    if caught:
        raise KeyboardInterrupt("SIGTERM" if signal.SIGINT not in caught else "")


_unblock_in_children: set[int] = set()  # what _signals_held blocks now, and children must not


def _unblock_after_fork() -> None:
    """In a child just forked (by subprocess with a preexec_fn, as Ray starts its processes),
    before it runs anything: unblock what _signals_held blocks in the parent, so that Ray's
    processes have the signal mask they would have had (Ray's shutdown ends them with SIGTERM)."""
    if _unblock_in_children:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _unblock_in_children)


@cache
def _unblock_after_fork_registered() -> None:
    os.register_at_fork(after_in_child=_unblock_after_fork)


@contextlib.contextmanager
def _signals_held(signals: tuple[signal.Signals, ...]):
    """Hold these signals back for the block: blocked in this thread (so they interrupt no
    system call, in it or in the threads it starts: an interrupted ray.init has crashed the
    driver, exit -11 or -6), and recorded by their handlers should one come through anyway;
    the handlers and mask are put back afterwards. Processes forked meanwhile do not inherit
    the block. Yields a function that returns the signals that arrived (taking pending ones, so
    that a block nested inside cannot drop them); what to do about them is the caller's.
    Ignored signals stay ignored. A no-op off the main thread, which is the only one that runs
    Python's signal handlers."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield lambda: caught
        return
    _unblock_after_fork_registered()
    previous = {}
    for sig in signals:
        if signal.getsignal(sig) not in (signal.SIG_IGN, None):
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    outer = set(_unblock_in_children)
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, set(signals))
    _unblock_in_children.update(set(signals) - mask)

    def arrived() -> list[int]:
        for sig in set(previous) & signal.sigpending():
            if signal.sigtimedwait({sig}, 0) is not None:  # taken off the pending set
                caught.append(sig)
        return list(dict.fromkeys(caught))

    try:
        yield arrived
    finally:
        arrived()
        _unblock_in_children.intersection_update(outer)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def _ray_sigterm_handler_kept_back():
    """ray.init begins by installing a SIGTERM handler that raises SystemExit at once: raised
    in the middle of its start-up, that has crashed the driver (exit -11, or -6) after the run
    had stopped. Keep it back for the block; yields the handlers Ray asked for."""
    wanted: list = []
    try:
        from ray._private import utils
    except ImportError:
        yield wanted
        return
    real = getattr(utils, "set_sigterm_handler", None)
    if real is None:
        yield wanted
        return
    utils.set_sigterm_handler = wanted.append
    try:
        yield wanted
    finally:
        utils.set_sigterm_handler = real


def _reload_ray_config() -> None:
    """Ray reads its RAY_* variables once, at import: make an imported Ray read them again."""
    config = getattr(sys.modules.get("ray._raylet"), "Config", None)
    if config is not None:
        config.initialize("")


def _token_found() -> bool | None:
    """Whether this machine holds a Ray authentication token (variable, file or default file);
    None with a Ray that has no token authentication."""
    try:
        from ray._raylet import AuthenticationTokenLoader
    except ImportError:
        return None
    loader = AuthenticationTokenLoader.instance()
    loader.reset_cache()
    return loader.has_token(ignore_auth_mode=True)


def _token_source() -> str:
    """Where Ray takes this machine's token from, in its order of precedence."""
    if os.environ.get("RAY_AUTH_TOKEN"):
        return "RAY_AUTH_TOKEN"
    if os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return os.environ["RAY_AUTH_TOKEN_PATH"]
    return "~/.ray/auth_token"


def _bootstrap_address(address: str) -> str | None:
    """HOST:PORT of the cluster's GCS; None where ray.init alone can tell (Ray Client, or no
    cluster found for 'auto')."""
    if address.startswith("ray://"):
        return None
    if address == "auto":
        try:
            from ray._private.services import canonicalize_bootstrap_address

            return canonicalize_bootstrap_address(address)
        except Exception:  # noqa: BLE001 - ray.init says what is missing
            return None
    return address


def _probe_cluster(target: str, address: str, timeout: float) -> None:
    """Fail in one line within ``timeout`` where ray.init would retry for long and fill stderr
    with Ray's warnings: nothing listening at the address, something there that is not a Ray
    cluster, no token on this machine, or a cluster that refuses this machine's token."""
    deadline = time.monotonic() + timeout
    host, _, port = target.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except TimeoutError:
        raise ClusterConnectionError(
            f"no Ray cluster answers at {address!r}: no connection within {timeout:g} s"
        ) from None
    except (OSError, ValueError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise ClusterConnectionError(f"no Ray cluster answers at {address!r}: {reason}") from None

    import ray

    token_mode = os.environ.get(AUTH_MODE_VAR, "").lower() == "token"
    if token_mode and _token_found() is False:
        raise ClusterConnectionError(
            f"RAY_AUTH_MODE=token, but this machine has no authentication token to join the "
            f"Ray cluster at {address!r}: put {TOKEN_SOURCES}"
        )
    outcome = _ask_gcs(target, deadline - time.monotonic())
    if outcome is None:
        return
    if isinstance(outcome, TimeoutError):
        raise ClusterConnectionError(
            f"{address!r} accepts connections but no Ray cluster answered there within "
            f"{timeout:g} s"
        )
    if isinstance(outcome, getattr(ray.exceptions, "AuthenticationError", ())):
        if token_mode:
            raise ClusterConnectionError(
                f"the Ray cluster at {address!r} refused this machine's authentication token "
                f"(from {_token_source()}): it must be the cluster's own (`ray get-auth-token` "
                "prints it on the head)"
            )
        raise ClusterConnectionError(
            f"the Ray cluster at {address!r} requires token authentication: set "
            f"RAY_AUTH_MODE=token and put {TOKEN_SOURCES}"
        )
    raise ClusterConnectionError(
        f"{address!r} accepts connections but does not answer as a Ray cluster "
        f"({type(outcome).__name__}: {_first_line(outcome)})"
    )


def _ask_gcs(target: str, timeout: float) -> BaseException | None:
    """Connect a GCS client to ``target`` (which fetches the cluster's id, with this machine's
    token): None on success, else the error, or TimeoutError past ``timeout``. Ray's own log lines
    about it (written by its C++ core to file descriptor 2) are kept back unless it succeeds."""
    from ray._raylet import GcsClient

    outcome: list[BaseException | None] = []

    def ask() -> None:
        try:
            GcsClient(address=target)
        except BaseException as err:  # noqa: BLE001 - handed to the caller
            outcome.append(err)
        else:
            outcome.append(None)

    asking = threading.Thread(target=ask, name="tune2048-ray-probe", daemon=True)
    with _stderr_captured() as captured:
        asking.start()
        asking.join(max(timeout, 0.1))
    if not outcome:
        return TimeoutError()
    if outcome[0] is None and captured.getvalue():
        sys.stderr.write(captured.getvalue())
    return outcome[0]


@contextlib.contextmanager
def _stderr_captured():
    """Send file descriptor 2 to a buffer for the block (yielded, filled when it ends)."""
    captured = io.StringIO()
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield captured
        return
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.write(sink.read().decode(errors="replace"))


def _first_line(err: BaseException) -> str:
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[0] if lines else type(err).__name__


# ---- the processes of an embedded Ray (read from /proc; nothing to do where there is none) ----

def _process_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, start time, state) of every process."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rpartition(")")[2].split()
        except OSError:
            continue
        table[int(name)] = (int(fields[1]), fields[19], fields[0])
    return table


def _children(parent: int) -> dict[int, str]:
    """The children of a process, by pid with their start times."""
    return {pid: start for pid, (ppid, start, _state) in _process_table().items()
            if ppid == parent}


def _new_children(before: dict[int, str]) -> dict[int, str]:
    """This process's children that were not among ``before`` (what ray.init started)."""
    return {pid: start for pid, start in _children(os.getpid()).items()
            if before.get(pid) != start}


def _descendants(roots: dict[int, str]) -> dict[int, str]:
    """These processes, if still the same (pid and start time), and all their descendants."""
    table = _process_table()
    children: dict[int, list[int]] = {}
    for pid, (parent, _start, _state) in table.items():
        children.setdefault(parent, []).append(pid)
    found: dict[int, str] = {}
    todo = [pid for pid, start in roots.items() if pid in table and table[pid][1] == start]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found[pid] = table[pid][1]
            todo.extend(children.get(pid, ()))
    return found


def _end_leftovers(processes: dict[int, str]) -> None:
    """Give ``processes`` a moment to end by themselves, then SIGTERM, then SIGKILL them; reap
    those that were this process's children."""
    try:
        _end(processes)
    finally:
        for pid, (parent, start, state) in _process_table().items():
            if parent == os.getpid() and state == "Z" and processes.get(pid) == start:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, os.WNOHANG)


def _end(processes: dict[int, str]) -> None:

    def alive() -> list[int]:
        table = _process_table()
        return [pid for pid, start in processes.items()
                if pid in table and table[pid][1] == start and table[pid][2] not in "ZX"]

    for sig in (None, signal.SIGTERM, signal.SIGKILL):
        deadline = time.monotonic() + LEFTOVER_GRACE
        left = alive()
        while left and sig is None and time.monotonic() < deadline:
            time.sleep(0.05)
            left = alive()
        if not left:
            return
        if sig is None:
            continue
        log.debug("ending %d Ray processes left after shutdown with %s", len(left), sig.name)
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        while alive() and time.monotonic() < deadline:
            time.sleep(0.05)


