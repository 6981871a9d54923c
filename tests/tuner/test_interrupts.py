"""tuner.interrupts: a Ctrl-C that Python drops inside a finalizer is neither printed nor lost."""

from __future__ import annotations

import subprocess
import sys
import textwrap

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
