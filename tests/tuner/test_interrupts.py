"""tuner.interrupts: a Ctrl-C that Python drops inside a finalizer is neither printed nor lost,
and one that comes while files that belong together are written waits until they are."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

from tuner import interrupts

DROPPED_IN_A_FINALIZER = textwrap.dedent("""
    import os, signal, time
    from tuner import interrupts

    interrupts.install()

    class Finalized:
        def __del__(self):  # as a Ray ObjectRef collected while the driver works
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)  # the handler runs here: its KeyboardInterrupt cannot leave __del__

    Finalized()
    print("went on")
    try:
        interrupts.check()
    except KeyboardInterrupt:
        print("interrupted")
""")


def test_a_ctrl_c_dropped_in_a_finalizer_is_remembered_and_not_printed():
    done = subprocess.run([sys.executable, "-c", DROPPED_IN_A_FINALIZER], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.stdout.split() == ["went", "on", "interrupted"], done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


def test_other_exceptions_in_finalizers_are_still_printed():
    code = DROPPED_IN_A_FINALIZER.replace(
        'os.kill(os.getpid(), signal.SIGINT)\n        time.sleep(0.1)', 'raise ValueError("boom")')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.split() == ["went", "on"]
    assert "Exception ignored" in done.stderr and "boom" in done.stderr


CTRL_C_WHILE_LOADING = textwrap.dedent("""
    import importlib.abc, os, signal, sys, time
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal

    class CtrlCOnImport(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "engine.families.classic":  # one of the modules `tune families` loads
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.1)
            return None

    sys.meta_path.insert(0, CtrlCOnImport())
    from tuner.cli.main import main
    sys.exit(main(["families"]))
""")


def test_a_ctrl_c_while_the_command_loads_its_modules_exits_130_without_a_traceback():
    done = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_LOADING], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "tune: interrupted\n"


DEFERRED = textwrap.dedent("""
    import os, signal, time
    from tuner import interrupts

    interrupts.install()
    try:
        with interrupts.deferred():
            with interrupts.deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.1)  # the handler runs here
                print("inner")
            print("outer")
        print("after")
    except KeyboardInterrupt as err:
        print("interrupted", repr(str(err)))
""")


def test_a_signal_in_a_deferred_block_is_raised_at_the_end_of_the_outermost_one():
    done = subprocess.run([sys.executable, "-c", DEFERRED], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.split() == ["inner", "outer", "interrupted", "'SIGTERM'"], done.stderr


def test_signals_held_back_are_recorded_and_handed_to_the_caller():
    """How Ray's start-up and shutdown are kept from being cut half-way by Ctrl-C or SIGTERM."""
    # a test run started in the background inherits SIGINT as ignored: Python's handler, as tune has
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        with interrupts.held() as caught:
            os.kill(os.getpid(), signal.SIGINT)  # blocked: pending, taken at the block's end
            time.sleep(0.05)  # nothing raised here
            # the block's very last moment, after the work that decides what to do about
            # signals: one that came there used to be taken off and dropped (a Ctrl-C as
            # ray.init returned let the run go on to its end and exit 0)
            os.kill(os.getpid(), signal.SIGTERM)
        assert sorted(caught) == sorted([signal.SIGINT, signal.SIGTERM])
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
        assert not signal.sigpending()
    finally:
        signal.signal(signal.SIGINT, inherited)
