"""The processes an embedded Ray leaves behind, found and ended.

Ray gives its raylet one second before SIGKILL, which can orphan the raylet's agents and workers,
and forgets the processes of a start-up that failed half-way. Processes are read from /proc and
named by pid and start time, so a pid reused meanwhile is never signalled; where there is no
/proc there is nothing to do.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time

log = logging.getLogger(__name__)

LEFTOVER_GRACE = 1.0  # seconds a Ray process gets to end by itself after shutdown, then SIGTERM


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the process's name (which, in parentheses, may
    hold spaces): state first, then parent pid, ..., start time at index 19; None where the
    process does not exist or there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()
    except OSError:
        return None


def start_time(pid: int) -> str | None:
    """When process ``pid`` started, in clock ticks since boot (what tells it from a later
    process given the same id); None where it does not exist or there is no /proc."""
    fields = _stat(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def _process_table() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, start time, state) of every process."""
    table = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if name.isdigit() and (fields := _stat(name)) is not None:
            table[int(name)] = (int(fields[1]), fields[19], fields[0])
    return table


def children(parent: int) -> dict[int, str]:
    """The children of a process, by pid with their start times."""
    return {pid: start for pid, (ppid, start, _state) in _process_table().items()
            if ppid == parent}


def new_children(before: dict[int, str]) -> dict[int, str]:
    """This process's children that were not among ``before`` (what ray.init started)."""
    return {pid: start for pid, start in children(os.getpid()).items()
            if before.get(pid) != start}


def descendants(roots: dict[int, str]) -> dict[int, str]:
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


def end_leftovers(processes: dict[int, str]) -> None:
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
