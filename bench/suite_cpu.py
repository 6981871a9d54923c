"""Where the test suite's CPU time goes: by test file, by test, and by kind of process.

CI must finish in minutes on a 2-core machine, where the suite keeps both cores busy: its wall
time follows its CPU time, most of which is spent outside the test processes (``tune``
subprocesses, Ray's daemons and workers). This runs pytest with the given arguments (default:
the whole suite, as the README runs it) while a thread reads every process's CPU time from
/proc ten times a second, and charges each process to the test that was running in the test
process it descends from when it was first seen (a Ray daemon to the test that started Ray, a
killed worker's replacement to the test that killed it). A test process's own CPU time is
measured by the test process itself, test by test. Processes that live less than a tenth of a
second may be missed, and a process first seen before any test (a shared cluster started by a
module's fixture counts for the test that needed it first). Linux only (/proc). It reaches
tune2048 through nothing but pytest's command line.

Run: ``python bench/suite_cpu.py [--top N] [-- PYTEST ARGUMENTS]``. Loaded by pytest as a plugin
(``-p suite_cpu``) it records each test of its process.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Self

import pytest

ROOT = Path(__file__).resolve().parents[1]
RECORDS_VAR = "SUITE_CPU_RECORDS"  # the folder where each test process writes its tests
SAMPLE_SECONDS = 0.1
TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
# What a process is, from its command line: the first tag found names its kind.
KINDS = (
    ("setup_worker", "Ray worker"), ("default_worker", "Ray worker"), ("ray::", "Ray worker"),
    ("raylet", "Ray daemons"), ("gcs_server", "Ray daemons"), ("dashboard", "Ray daemons"),
    ("log_monitor", "Ray daemons"), ("monitor.py", "Ray daemons"),
    ("runtime_env", "Ray daemons"), ("ray start", "Ray daemons"),
)


# ---- the plugin, in every test process ---------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """A test's start, end and this process's CPU time for it, fixtures' set-up and teardown
    included."""
    started, cpu = time.time(), _own_cpu()
    yield
    folder = os.environ.get(RECORDS_VAR)
    if folder:
        record = {"test": item.nodeid, "pid": os.getpid(), "start": started,
                  "end": time.time(), "own": _own_cpu() - cpu}
        with (Path(folder) / f"tests-{os.getpid()}.jsonl").open("a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")


def _own_cpu() -> float:
    times = os.times()
    return times.user + times.system


# ---- the sampler, in this process ----------------------------------------------------------------

def _stat(pid: int) -> tuple[int, int, int]:
    """(parent pid, CPU ticks, start time in ticks) of a process, from /proc."""
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
        text = f.read()
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[19])


def _command(pid: int) -> str:
    with open(f"/proc/{pid}/cmdline", "rb") as f:
        return f.read().replace(b"\0", b" ").decode(errors="replace").strip()


class Sampler:
    """Every process that appears while it runs: its command, when it was first seen, its
    ancestors then, and its CPU ticks (the most read)."""

    def __init__(self):
        self.processes: dict[tuple[int, int], dict] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._before: set[tuple[int, int]] = set()

    def __enter__(self) -> Self:
        self._sample(first=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._done.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._done.wait(SAMPLE_SECONDS):
            self._sample()

    def _sample(self, first: bool = False) -> None:
        now = time.time()
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            try:
                parent, ticks, started = _stat(pid)
                key = (pid, started)
                if first:
                    self._before.add(key)
                    continue
                if key in self._before:  # this process among them
                    continue
                seen = self.processes.get(key)
                if seen is None:
                    seen = self.processes[key] = {"command": _command(pid), "seen": now,
                                                  "ancestors": self._ancestors(parent),
                                                  "ticks": 0}
                seen["ticks"] = max(seen["ticks"], ticks)
            except (OSError, ValueError, IndexError):
                continue  # it ended while read

    @staticmethod
    def _ancestors(pid: int) -> list[int]:
        chain = []
        while pid > 1 and len(chain) < 64:
            chain.append(pid)
            try:
                pid = _stat(pid)[0]
            except (OSError, ValueError, IndexError):
                break
        return chain


# ---- the report -------------------------------------------------------------------------------

def kind(command: str) -> str:
    for tag, name in KINDS:
        if tag in command:
            return name
    return "other processes (tune, python, tools)"


def charge(processes: dict, tests: list[dict]) -> tuple[dict, dict, float]:
    """CPU seconds by test and by (test, kind of process), and what no test could be charged."""
    by_process = collections.defaultdict(list)
    for test in sorted(tests, key=lambda t: t["start"]):
        by_process[test["pid"]].append(test)
    starts = {pid: [t["start"] for t in runs] for pid, runs in by_process.items()}
    by_test = collections.Counter()
    by_kind = collections.defaultdict(collections.Counter)
    for test in tests:
        by_test[test["test"]] += test["own"]
        by_kind[test["test"]]["test process"] += test["own"]
    uncharged = 0.0
    for seen in processes.values():
        seconds = seen["ticks"] / TICKS
        if not seconds:
            continue
        owner = next((pid for pid in seen["ancestors"] if pid in by_process), None)
        if owner is None:
            uncharged += seconds
            continue
        at = bisect.bisect_right(starts[owner], seen["seen"]) - 1
        test = by_process[owner][max(at, 0)]["test"]
        by_test[test] += seconds
        by_kind[test][kind(seen["command"])] += seconds
    return by_test, by_kind, uncharged


def report(processes: dict, tests: list[dict], wall: float, top: int) -> str:
    test_pids = {t["pid"] for t in tests}
    processes = {key: seen for key, seen in processes.items() if key[0] not in test_pids}
    by_test, by_kind, uncharged = charge(processes, tests)
    kinds = collections.Counter()
    for counter in by_kind.values():
        kinds.update(counter)
    total = sum(by_test.values()) + uncharged
    tests_run = f"{len(tests):,} test" + ("" if len(tests) == 1 else "s")
    lines = [(f"{tests_run} in {wall:,.0f} s of wall time; "
              f"{total:,.0f} CPU-seconds ({total / wall if wall else 0:.2f} cores busy on average), "
              f"{uncharged:,.0f} of them in processes no test started"), "",
             "CPU-seconds by kind of process:"]
    lines += [f"{seconds:9,.1f}  {name}" for name, seconds in kinds.most_common()]
    files = collections.Counter()
    for test, seconds in by_test.items():
        files[test.split("::")[0]] += seconds
    lines += ["", f"CPU-seconds by test file (the {top} most):"]
    lines += [f"{seconds:9,.1f}  {name}" for name, seconds in files.most_common(top)]
    lines += ["", f"CPU-seconds by test (the {top} most), and the kinds that cost most:"]
    for test, seconds in by_test.most_common(top):
        most = ", ".join(f"{name} {part:.0f}" for name, part in by_kind[test].most_common(2))
        lines.append(f"{seconds:9,.1f}  {test}  ({most})")
    walls = collections.Counter()
    for test in tests:
        walls[test["test"]] += test["end"] - test["start"]
    waiting = collections.Counter({test: seconds - by_test[test]
                                   for test, seconds in walls.items() if seconds > by_test[test]})
    lines += ["", (f"Seconds waiting ({sum(waiting.values()):,.0f} in all): a test's wall time less "
                   f"its CPU time, where its core idles (the {top} most):")]
    lines += [f"{seconds:9,.1f}  {test}" for test, seconds in waiting.most_common(top)]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--top", type=int, default=25, help="files and tests listed (default 25)")
    parser.add_argument("pytest_args", nargs="*", metavar="-- PYTEST ARGUMENTS",
                        help="what pytest runs (default: the whole suite)")
    args = parser.parse_args()
    if not Path("/proc/self/stat").exists():
        print("suite_cpu: needs Linux's /proc to read other processes' CPU time", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="suite-cpu-") as folder:
        env = {**os.environ, RECORDS_VAR: folder,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "bench"),
                                                           os.environ.get("PYTHONPATH")]))}
        started = time.time()
        with Sampler() as sampler:
            done = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite_cpu",
                                   *args.pytest_args], cwd=ROOT, env=env, check=False)
        wall = time.time() - started
        tests = [json.loads(line) for path in Path(folder).glob("tests-*.jsonl")
                 for line in path.read_text(encoding="utf-8").splitlines()]
    print(report(sampler.processes, tests, wall, args.top))
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
