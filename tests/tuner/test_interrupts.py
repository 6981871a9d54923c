"""tuner.interrupts: a Ctrl-C that Python drops inside a finalizer is neither printed nor lost,
and one that comes while files that belong together are written waits until they are."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

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


@pytest.mark.subprocess
def test_a_ctrl_c_dropped_in_a_finalizer_is_remembered_and_not_printed():
    done = subprocess.run([sys.executable, "-c", DROPPED_IN_A_FINALIZER], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.stdout.split() == ["went", "on", "interrupted"], done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.subprocess
def test_other_exceptions_in_finalizers_are_still_printed():
    code = DROPPED_IN_A_FINALIZER.replace(
        'os.kill(os.getpid(), signal.SIGINT)\n        time.sleep(0.1)', 'raise ValueError("boom")')
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.split() == ["went", "on"]
    assert "Exception ignored" in done.stderr and "boom" in done.stderr


CUT_IN_A_CONSTRUCTOR = textwrap.dedent("""
    import os, signal, sys, time
    from tuner import interrupts

    interrupts.install()

    class HalfMade:  # as llvmlite's OutputString, cut by Ctrl-C as numba loads a kernel
        def __init__(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.1)  # the handler raises here, before the attribute is set
            self.handle = 1

        def __del__(self):
            print(self.handle)  # AttributeError on a half-made object

    try:
        HalfMade()
    except KeyboardInterrupt:
        print("interrupted")
    sys.exit(130)
""")


@pytest.mark.subprocess
def test_a_finalizer_that_fails_because_a_signal_cut_its_constructor_is_not_printed():
    done = subprocess.run([sys.executable, "-c", CUT_IN_A_CONSTRUCTOR], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 130 and done.stdout.split() == ["interrupted"], done.stderr
    assert done.stderr == ""


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


@pytest.mark.subprocess
def test_a_ctrl_c_while_the_command_loads_its_modules_exits_130_without_a_traceback():
    done = subprocess.run([sys.executable, "-c", CTRL_C_WHILE_LOADING], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "tune: interrupted\n"


WHILE_A_CLASS_IS_MADE = textwrap.dedent("""
    import os, signal, sys, time
    from tuner import interrupts

    interrupts.install()

    class Named:
        def __set_name__(self, owner, name):  # as numpy's cached properties, enum members
            os.kill(os.getpid(), signal.Signals[sys.argv[1]])
            time.sleep(0.01)  # the handler runs here

    try:
        class Made:
            attribute = Named()
        for _ in range(10_000):
            time.sleep(0.001)  # the interrupt comes again here
        print("lost")
    except KeyboardInterrupt as interrupt:
        print("interrupted" + interrupts.describe(interrupt).replace(" ", ""))
        where = interrupt.__traceback__
        while where is not None:  # the functions it went through, outermost first
            print(where.tb_frame.f_code.co_name)
            where = where.tb_next
""")


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
@pytest.mark.subprocess
def test_an_interrupt_while_a_class_is_made_comes_once_the_class_is_made(sig):
    """Python 3.11 turns what a __set_name__ raises into RuntimeError: an interrupt landing in
    one (while numpy or numba load, say) would have ended the command as a bug, exit status 1."""
    done = subprocess.run([sys.executable, "-c", WHILE_A_CLASS_IS_MADE, sig],
                          capture_output=True, text=True, timeout=60, check=False)
    expected = "interrupted" + ("(SIGTERM)" if sig == "SIGTERM" else "")
    # raised by the handler straight from the module's code: not from inside __set_name__
    assert done.stdout.split() == [expected, "<module>", "_record_and_raise"], done.stderr
    assert done.stderr == ""


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


@pytest.mark.subprocess
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
