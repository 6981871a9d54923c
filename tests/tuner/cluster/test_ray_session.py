"""Ray's start-up and shutdown: held back from Ctrl-C and SIGTERM, nothing left running."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tuner.cluster import processes, ray_session

# ---- start-up and shutdown under signals --------------------------------------------------------

def test_ray_keeps_its_sigterm_handler_to_itself_while_it_starts():
    from ray._private import utils

    real = utils.set_sigterm_handler
    with ray_session._ray_sigterm_handler_kept_back() as wanted:
        utils.set_sigterm_handler(print)  # what ray.init does first
        assert wanted == [print]
    assert utils.set_sigterm_handler is real
    assert signal.getsignal(signal.SIGTERM) is not print


def test_what_rays_core_writes_while_it_shuts_down_is_dropped_and_stderr_comes_back(capfd):
    """Ray's core writes errors about the tasks its shutdown ends straight to file descriptor 2
    ("Failed to push error to driver"): after an interrupt they came as a second line."""
    import os

    with ray_session._ray_core_errors_dropped():
        os.write(2, b"[E task_manager.cc] Failed to push error to driver\n")
    os.write(2, b"tune: interrupted\n")
    assert capfd.readouterr().err == "tune: interrupted\n"


@pytest.mark.ray
def test_a_sigterm_that_reaches_one_of_rays_threads_while_ray_starts_is_one_line():
    """ray.init installs Ray's own handler for fatal signals, SIGTERM among them, and a SIGTERM
    that a thread of Ray's took while it started came as a stack dump above tune's line."""
    code = textwrap.dedent("""
        import signal, threading
        from tuner import interrupts
        from tuner.cluster import ray_session
        interrupts.install()
        import ray
        real_init = ray.init

        def init_then_sigterm_a_thread(**options):
            real_init(**options)
            def take_sigterm():  # as a thread of Ray's that does not block it
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
                signal.pthread_kill(threading.get_ident(), signal.SIGTERM)
            thread = threading.Thread(target=take_sigterm)
            thread.start()
            thread.join()

        ray.init = init_then_sigterm_a_thread
        try:
            ray_session.RaySession(workers=1)
        except KeyboardInterrupt as interrupt:
            print("interrupted" + interrupts.describe(interrupt))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          timeout=180)
    assert done.stdout.strip() == "interrupted (SIGTERM)", done.stderr
    assert "SIGTERM received" not in done.stderr, done.stderr


STUBBORN = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"


@pytest.mark.parametrize("code", ["import time; time.sleep(60)", STUBBORN],
                         ids=["ends-on-sigterm", "ignores-sigterm"])
@pytest.mark.subprocess
def test_processes_ray_leaves_behind_are_ended(code):
    """What close() does with the processes of an embedded Ray still running after shutdown."""
    leftover = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(0.3)  # past the interpreter's start, so its SIGTERM handler is in place
    start = processes._process_table()[leftover.pid][1]
    started = time.monotonic()
    processes.end_leftovers({leftover.pid: start})
    assert leftover.pid not in processes._process_table()  # ended, and reaped (no zombie)
    assert time.monotonic() - started < 4 * processes.LEFTOVER_GRACE


@pytest.mark.subprocess
def test_a_process_that_reused_a_pid_is_left_alone():
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        processes.end_leftovers({other.pid: "not its start time"})
        assert other.poll() is None
    finally:
        other.kill()
        other.wait()


@pytest.mark.subprocess
def test_a_signal_while_ray_is_imported_is_acted_on_once_the_import_is_complete():
    """Raised inside the import of Ray's compiled modules, KeyboardInterrupt is printed as
    "Exception ignored" and lost, and the run went on: the import holds it back instead."""
    code = textwrap.dedent("""
        import importlib.abc, os, signal, sys
        signal.signal(signal.SIGINT, signal.default_int_handler)

        class InterruptWhenRayImports(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name == "ray._raylet":
                    os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C, in the middle of the import
                return None

        sys.meta_path.insert(0, InterruptWhenRayImports())
        from tuner.cluster import processes, ray_session
        try:
            ray_session._import_ray()
        except KeyboardInterrupt:
            import ray
            print("interrupted after the import:", callable(ray.init), "ray._raylet" in sys.modules)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.stdout.strip() == "interrupted after the import: True True", done.stderr
    assert "Exception ignored" not in done.stderr
