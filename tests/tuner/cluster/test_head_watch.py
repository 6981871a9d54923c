"""tuner.cluster.head_watch without Ray: a "head" that is a listening socket of the test's, closed
while the watch runs. (A real cluster's head killed mid-run: tests/tuner/cluster/test_faults.py.)"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tuner.cluster.head_watch import HeadLost

# A process that watches a listening socket as a head (checks 0.1 s apart), then closes it:
# argv[1] "lost", as it runs; "settle", while a failure of Ray's waits on the watch; "closed",
# once the watch is closed. Its report, if it has one (argv[2]), is a line on stdout.
WATCHED = """
import socket, sys, threading, time
from tuner.cluster import head_watch
head_watch.CHECK_SECONDS, head_watch.SETTLE_SECONDS = 0.1, 0.5
listener = socket.create_server(("127.0.0.1", 0))
report = (lambda lost: print("reported:", lost, flush=True)) if sys.argv[2] == "report" else None
watch = head_watch.HeadWatch("127.0.0.1:%d" % listener.getsockname()[1], "head:6379", report)
time.sleep(0.3)
watch.settle()  # the head answers throughout: returns
if sys.argv[1] == "settle":
    threading.Timer(0.2, listener.close).start()
    watch.settle()  # the head goes meanwhile: the watch ends the process
    print("settled", flush=True)
if sys.argv[1] == "closed":
    watch.close()
listener.close()
time.sleep(2)  # 20 checks
print("still running", flush=True)
"""


@pytest.mark.subprocess
@pytest.mark.parametrize("when, report", [("lost", "report"), ("lost", "none"),
                                          ("settle", "report")])
def test_a_lost_head_is_said_and_ends_the_process(when, report):
    done = subprocess.run([sys.executable, "-c", WATCHED, when, report], capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == HeadLost.exit_code == 75, done.stderr
    lost = "the Ray cluster's head at head:6379 was lost: it has not answered for "
    if report == "report":
        assert done.stdout.startswith(f"reported: {lost}") and done.stderr == ""
    else:  # a command with no report of its own: one line
        assert done.stdout == "" and done.stderr.startswith(f"tune: error: {lost}")
        assert len(done.stderr.splitlines()) == 1


@pytest.mark.subprocess
def test_a_closed_watch_ends_nothing():
    done = subprocess.run([sys.executable, "-c", WATCHED, "closed", "report"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (0, "still running\n"), done.stderr
