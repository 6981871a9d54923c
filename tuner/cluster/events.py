"""What happens to the cluster while games are played, said in one line each, with the time it
was seen: a node that joins or leaves, a Ray worker that dies, a task Ray plays again.

Nodes are compared with the previous look at Ray's node table (``NodeWatch``), at most every
``NODE_CHECK_SECONDS`` while the driver waits for games. Workers and retries are what Ray itself
tells the driver, in messages that Ray would print on its stdout: the last 20 lines of a dead
raylet's log (some 50 lines of ``[state-dump]`` on the terminal), a worker's exit details, the
retries a task has left (with an external engine's failure, its one line). Each message goes to
``run.log`` only (logged with ``FILE_ONLY``), as one line: its first, with how many more it had
and where Ray's own logs keep them; the ones that say something a user acts on become an event
line. An event line carries the time it was seen, which ``run.log`` writes once
(``RunLogFormat``).
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass

from engine.echo import shorten
from engine.stats import counted

log = logging.getLogger(__name__)

NODE_CHECK_SECONDS = 2.0  # ray.nodes() asks the GCS: cheap, but not at every poll
FILE_ONLY = {"terminal": False}  # ``extra`` of a record kept off the terminal (tuner.cli.main)
TIMED = "timed"  # set on an event line's record: its message begins with the time it was seen

WORKER_DIED = re.compile(r"A worker died or was killed while executing a task")
WORKER_PID = re.compile(r"Worker PID: (\d+)")
WORKER_ADDRESS = re.compile(r"Worker IP address: (\S+)")
TASK_RETRIED = re.compile(r"Task \S+ failed\. There (?:are|is) (\d+) retr\w+ remaining")
ENGINE_LOST = re.compile(r"EngineLost: (.+)")  # an external engine's failure, its one line
SAME_EVENT_SECONDS = 10.0  # an engine's failure said again within this is left to run.log


@dataclass(frozen=True)
class Node:
    """A live node as the events name it: its address and the start of its id (nodes started
    on one machine share an address), and its CPUs."""

    node_id: str
    address: str
    cpus: int

    @property
    def name(self) -> str:
        return f"{self.address} ({self.node_id[:8]})"


def alive_nodes(table: list[dict]) -> dict[str, Node]:
    """The live nodes of Ray's node table (``ray.nodes()``), by id."""
    return {
        entry["NodeID"]: Node(entry["NodeID"], entry.get("NodeManagerAddress", "?"),
                              int(entry.get("Resources", {}).get("CPU", 0)))
        for entry in table if entry.get("Alive")
    }


def node_changes(before: dict[str, Node], after: dict[str, Node]) -> list[tuple[int, str]]:
    """(level, line) for each node that left or joined between two looks at the node table."""
    total = counted(sum(node.cpus for node in after.values()), "CPU")
    left = [(f"node {node.name} left: -{counted(node.cpus, 'CPU')}, {total} now; its tasks are "
             "played again elsewhere")
            for node_id, node in before.items() if node_id not in after]
    joined = [f"node {node.name} joined: +{counted(node.cpus, 'CPU')}, {total} now"
              for node_id, node in after.items() if node_id not in before]
    lines = [(logging.WARNING, line) for line in left]
    lines += [(logging.INFO, line) for line in joined]
    return lines


def message_event(message: str) -> str | None:
    """The event line that a message of Ray's to the driver makes, or None for one that says
    nothing a user acts on (a raylet's last log lines: the node's departure is its own line)."""
    if WORKER_DIED.search(message):
        pid, address = WORKER_PID.search(message), WORKER_ADDRESS.search(message)
        who = f"Ray worker {pid.group(1)}" if pid else "a Ray worker"
        return f"{who}{f' on {address.group(1)}' if address else ''} died while playing a task"
    if retried := TASK_RETRIED.search(message):
        left = int(retried.group(1))
        retries = f"{left} {'retry' if left == 1 else 'retries'} left"
        if lost := ENGINE_LOST.search(message):
            return f"a task's engine failed; the task is played again ({retries}): {lost.group(1)}"
        return f"a task of games was lost and is played again ({retries})"
    return None


def say(level: int, line: str) -> None:
    """An event line, on the terminal and in run.log, with the time it was seen."""
    log.log(level, "%s %s", time.strftime("%H:%M:%S"), line, extra={TIMED: True})


class RunLogFormat(logging.Formatter):
    """``run.log``'s lines, each with its date and time, once: an event line's own time (which
    the terminal shows) is left to the date that begins the line."""

    def __init__(self):
        super().__init__("%(asctime)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        if getattr(record, TIMED, False):
            return f"{record.asctime} {record.message.partition(' ')[2]}"
        return super().formatMessage(record)


def one_line(message: str, logs: str | None = None) -> str:
    """A message of Ray's in one line: its first, and where it ends in a Python exception (a
    task's traceback), that exception's line; then how many lines that leaves out and where
    Ray's own logs keep them (``logs``: the session's logs folder, where known)."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if not lines:
        return ""
    kept = [lines[0]]
    if len(lines) > 1 and EXCEPTION_LINE.match(lines[-1]):
        kept.append(lines[-1])
    text = " ... ".join(shorten(line, MESSAGE_CHARACTERS) for line in kept)
    if (left := len(lines) - len(kept)) == 0:
        return text
    where = f": {logs}, on the node it is about" if logs else ""
    return f"{text} [{counted(left, 'more line')} in Ray's logs{where}]"


MESSAGE_CHARACTERS = 500  # of a line of a message of Ray's, in run.log
EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*: ")  # "engine.external.player.EngineLost: ..."
_engine_said = {"reason": "", "at": -SAME_EVENT_SECONDS}  # the last engine failure said
_ray_said = {"message": "", "at": -SAME_EVENT_SECONDS}  # the last message of Ray's logged


def ray_said(message: str, logs: str | None = None) -> None:
    """A message Ray sends the driver: one line in run.log (``one_line``), and its event line
    where it has one. The same message again within ``SAME_EVENT_SECONDS`` (Ray sends a dead
    raylet's twice) is not logged again; an engine failing the same way in task after task (a
    seed it refuses, say) is said once every ``SAME_EVENT_SECONDS``. Called from Ray's thread
    that receives them."""
    now = time.monotonic()
    if message != _ray_said["message"] or now - _ray_said["at"] >= SAME_EVENT_SECONDS:
        _ray_said.update(message=message, at=now)
        log.warning("Ray: %s", one_line(message, logs), extra=FILE_ONLY)
    if (line := message_event(message)) is None:
        return
    if lost := ENGINE_LOST.search(message):
        # by its words: the seed or the number it names changes from task to task
        reason = re.sub(r"\d+", "N", lost.group(1).partition(" (request:")[0])
        if reason == _engine_said["reason"] and now - _engine_said["at"] < SAME_EVENT_SECONDS:
            return
        _engine_said.update(reason=reason, at=now)
    say(logging.WARNING, line)


class NodeWatch:
    """Looks at Ray's node table now and then and says which nodes left or joined since the last
    look. ``nodes``: a callable returning the table (``ray.nodes``)."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.known = alive_nodes(nodes())
        self.checked = time.monotonic()

    def poll(self) -> bool:
        """Compare with the last look, if it is ``NODE_CHECK_SECONDS`` old; whether a node left
        or joined since."""
        if time.monotonic() - self.checked < NODE_CHECK_SECONDS:
            return False
        now = alive_nodes(self.nodes())
        self.checked = time.monotonic()
        changes = node_changes(self.known, now)
        for level, line in changes:
            say(level, line)
        self.known = now
        return bool(changes)
