"""Ray for one evaluator: started on this machine, joined at an address, or the one this process
already runs, decided once, here, and ended safely under Ctrl-C and SIGTERM.

The embedded Ray's processes listen on every interface of this machine (Ray binds no narrower), so
it always runs with Ray's token authentication: ``RAY_AUTH_MODE=token`` is set before Ray reads
its configuration, whatever the environment says, and put back when the session ends. Joining a
cluster is ``tuner.cluster.ray_join``'s; the processes Ray leaves behind are
``tuner.cluster.processes``'; what this needs of Ray's private modules is ``tuner.ray_api``'s.

Ray's compiled modules swallow a ``KeyboardInterrupt`` raised while they are imported (the run
then went on as if never interrupted), and one raised inside ``ray.init`` has crashed the driver
and orphaned Ray's processes. So Ctrl-C and SIGTERM are held back while Ray is imported and
started (``tuner.interrupts.held``), and acted on once it has returned; Ray's shutdown is never
cut half-way, and what it leaves running is ended.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable

from tuner import interrupts, ray_api
from tuner.cluster import processes, ray_join
from tuner.cluster.ray_join import ClusterConnectionError

log = logging.getLogger(__name__)


class RaySession:
    """Ray for one evaluator: an embedded Ray started on this machine (``address`` None, with
    ``workers`` CPUs), a cluster joined at ``address``, or the Ray this process already runs
    (left as it is, ``owns_ray`` False).

    ``ship``: called only when this session starts or joins Ray, it returns Ray's job-level
    runtime environment (what Ray ships to every worker, which it uploads at ``ray.init`` only);
    inside a Ray someone else started there is nothing to ship. ``connect_timeout``: the seconds
    an address gets to answer as a Ray cluster that accepts this machine's token; past them, or
    on a refusal, ``ClusterConnectionError`` (Ray alone would retry for minutes, printing a
    warning a second).

    Ctrl-C or SIGTERM while Ray is imported or started: Ray is shut down and
    ``KeyboardInterrupt`` raised once ``ray.init`` returns. ``close`` finishes the shutdown
    whatever signal arrives, and ends what Ray's own shutdown leaves running.
    """

    def __init__(self, address: str | None = None, workers: int | None = None,
                 ship: Callable[[], dict | None] = lambda: None, connect_timeout: float = 60.0):
        if not connect_timeout > 0:
            raise ValueError(f"connect_timeout must be positive, got {connect_timeout!r}")
        self._environ_before: dict[str, str | None] = {}
        self._started = False  # this session called ray.init, so close() shuts Ray down
        self._ray_roots: dict[int, str] = {}  # the processes that ray.init started
        self._info: dict = {}  # what ray.init said of the Ray it started or joined
        self.owns_ray = not ray_running()
        self.address = address
        if self.owns_ray:
            runtime_env = ship()
            try:
                if not address:
                    # set before Ray is imported, which reads it (ray_api.reload_config)
                    self._set_environ(ray_join.AUTH_MODE_VAR, "token")
                _import_ray()
                if address:
                    self._join(address, connect_timeout, runtime_env)
                else:
                    self._start(workers, runtime_env)
            except BaseException:
                self._shutdown()  # a signal that came after ray.init returned: end that Ray too
                raise
        import ray  # loaded by _import_ray, with signals held: only looked up here

        self.ray = ray

    def describe(self) -> str:
        """What this session started or joined, and what it holds now: the first thing a run
        says, so that a user sees at once whether the cluster is the one they meant."""
        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        cpus = int(sum(n.get("Resources", {}).get("CPU", 0) for n in nodes))
        held = f"{len(nodes):,} node{'s' if len(nodes) != 1 else ''}, {cpus:,} CPU" + (
            "s" if cpus != 1 else "")
        if not self.owns_ray:
            return f"the Ray this process had already joined ({held})"
        if self.address:
            return f"joined the Ray cluster at {self.address} ({held})"
        return f"started Ray on this machine ({held})"

    @property
    def head(self) -> str | None:
        """HOST:PORT of the GCS of the cluster this session joined (on its head), which Ray
        needs throughout; None for a Ray this session started, or did not start."""
        return self._info.get("gcs_address") if self.owns_ray and self.address else None

    @property
    def logs(self) -> str | None:
        """Ray's logs folder of this session, as ray.init names it: in Ray's folder on this
        machine, or on a cluster, the head's (its ``ray start --temp-dir``; each node keeps its
        own logs in the folder of the same session name); None where not known."""
        session = self._info.get("session_dir")
        return os.path.join(session, "logs") if session else None

    def _start(self, workers: int | None, runtime_env: dict | None) -> None:
        """Start an embedded Ray on this machine, with token authentication (RAY_AUTH_MODE,
        set before this session imports Ray)."""
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
        auth_mode = os.environ.get(ray_join.AUTH_MODE_VAR)
        if address == "auto" and auth_mode is None and ray_api.token_found():
            # What ray.init does for 'auto' by itself, done first so the probe agrees with it
            # and Ray prints no warning about it.
            self._set_environ(ray_join.AUTH_MODE_VAR, "token")
        target = ray_join.bootstrap_address(address)
        if target is not None:
            ray_join.probe_cluster(target, address, timeout)
        self._init(f"join the Ray cluster at {address!r}", address=address, log_to_driver=False,
                   logging_level=logging.WARNING, runtime_env=runtime_env)

    def _init(self, what: str, **options) -> None:
        """ray.init, with Ctrl-C and SIGTERM held back until it returns (then Ray is shut down
        and KeyboardInterrupt raised) and one line for whatever else goes wrong."""
        import ray  # loaded by _import_ray, with signals held: only looked up here

        sigterm_handler = signal.getsignal(signal.SIGTERM)
        children_before = processes.children(os.getpid())
        error = None
        with _ray_sigterm_handler_kept_back() as ray_sigterm_handlers, \
                _ray_failure_handler_kept_back(), interrupts.held() as caught:
            self._started = True
            try:
                context = ray.init(**options)
                self._info = dict(getattr(context, "address_info", None) or {})
            except Exception as err:  # noqa: BLE001 - whatever Ray raises, one line says it
                error = ClusterConnectionError(f"could not {what}: {ray_join.first_line(err)}")
            except BaseException:
                self._shutdown(children_before)
                raise
            self._ray_roots = processes.new_children(children_before)
        if error is not None or caught:
            self._shutdown()
        interrupts.raise_if_any(caught)
        if error is not None:
            raise error
        if ray_sigterm_handlers and not callable(sigterm_handler) and \
                threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, ray_sigterm_handlers[-1])  # as ray.init leaves it

    def _set_environ(self, name: str, value: str) -> None:
        """Set a Ray variable for as long as this session runs Ray, and make Ray see it."""
        self._environ_before.setdefault(name, os.environ.get(name))
        os.environ[name] = value
        ray_api.reload_config()

    def _restore_environ(self) -> None:
        if not self._environ_before:
            return
        for name, value in self._environ_before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._environ_before.clear()
        ray_api.reload_config()

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
        with interrupts.held():
            if self._started:
                self._started = False
                if children_before is not None:
                    self._ray_roots = processes.new_children(children_before)
                leftovers = processes.descendants(self._ray_roots)
                try:
                    import ray  # loaded by _import_ray, with signals held: only looked up here

                    with _ray_core_errors_dropped():
                        ray.shutdown()
                finally:
                    processes.end_leftovers(leftovers)
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
    with interrupts.held() as caught:
        import ray  # noqa: F401 - imported for its side effect, once, with signals held
    interrupts.raise_if_any(caught)


@contextlib.contextmanager
def _ray_core_errors_dropped():
    """Send what is written to stderr (file descriptor 2) to /dev/null for the block. Ray's core
    writes its own errors there about the tasks its shutdown ends (e.g. "Failed to push error to
    driver" for a unit whose worker it has just stopped): they are about the shutdown we asked
    for, and would reach the user as a second line beside ours."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def _ray_failure_handler_kept_back():
    """ray.init installs, in this process, Ray's handler for fatal signals, SIGTERM among them;
    it prints a stack dump before passing the signal on. A SIGTERM that reached one of Ray's
    threads while ray.init ran came as seven lines of dump above "tune: interrupted (SIGTERM)".
    The driver keeps Python's handlers (faulthandler still reports a crash); Ray's workers keep
    theirs."""
    return ray_api.failure_signal_handler_kept_back()


@contextlib.contextmanager
def _ray_sigterm_handler_kept_back():
    """ray.init begins by installing a SIGTERM handler that raises SystemExit at once: raised
    in the middle of its start-up, that has crashed the driver (exit -11, or -6) after the run
    had stopped. Keep it back for the block; yields the handlers Ray asked for."""
    wanted: list = []
    with ray_api.sigterm_handler_replaced(wanted.append):
        yield wanted
