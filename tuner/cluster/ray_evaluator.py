"""Playing units of games as Ray tasks, on an embedded local Ray or on a cluster, and the one
place an evaluator is built from a config's ``ray`` section (``evaluator_for``).

On Ray, every unit a schedule hands out is in flight at once (Ray queues what the CPUs cannot
start yet), and the driver asks the schedule again when units come back; each worker process
keeps the compiled engine loaded and caches the last few players it built
(``tuner.games.evaluation.SolverCache``), so a unit costs one table build at most. Ray retries
units lost with a dead worker or node (``max_retries``), and units an external engine failed
(``EngineLost``); an exception inside a game is not retried: it is reported with the
candidate, the seed and the traceback. The family's own code failing while a unit builds its
player comes back as the family guard's ``FamilyCodeError``, one line naming the family's file
and line as the user knows them, which is bad input. Nodes
that leave or join, workers that die and the tasks played again are said in a line each
(``tuner.cluster.events``); Ray's own messages about them go to ``run.log`` only.

A family that is not built in reaches every worker through Ray's job-level ``runtime_env``
(``py_modules``: a family file, or the top-level package of a family module), as do an external
engine's files (its config's ``engine.ship``), so nothing but tune2048 itself needs installing
on the nodes; its ``working_dir`` is an empty folder, so that no file of the driver's working
directory shadows a module on the workers. Every unit carries the identity of the driver's code
(``tuner.installed``), and a worker that runs other code refuses it, since the same seed must
play the same game on every node.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from engine.errors import Tune2048Error
from engine.external.player import EngineCommand, EngineLost, EnginePlayer
from engine.solver import GameResult, PlayerSpec
from tuner import installed, interrupts, ray_api
from tuner.cluster import events
from tuner.cluster.head_watch import HeadLost, HeadWatch
from tuner.cluster.ray_session import RaySession
from tuner.cluster.shipping import empty_working_dir, ship_engine, ship_family
from tuner.errors import EvaluationError
from tuner.games import throughput
from tuner.games.evaluation import (
    Evaluator,
    GameCrash,
    Job,
    SerialEvaluator,
    WrongCode,
    _Backend,
    engine_lost_text,
    play_unit,
)
from tuner.games.policy import GameTimes, SchedulePolicy
from tuner.games.schedule import Schedule, Unit, drive

if TYPE_CHECKING:
    from tuner.config import RaySection

log = logging.getLogger(__name__)

SHIP_EXCLUDES = ["__pycache__", "*.pyc", ".git"]  # caches (numba's too) stay home
POLL_SECONDS = 0.5  # how often the driver collects finished units
# A job whose games take roughly less CPU time than this plays in this process where no workers
# were asked for: starting Ray and loading the engine in its workers costs about this much
# (7 to 15 s), so Ray could not finish it sooner on any number of CPUs.
SMALL_JOB_SECONDS = 15.0
# The failures of a task (Ray's names) that a lost head gives too: its raylet, or its node, gone
RAYLET_LOST = ("LocalRayletDiedError", "NodeDiedError")
# Ray's workers in a command that plays a small job on Ray: every core, and at least two
# (--workers 1 plays in this process where a command allows it)
ON_RAY_WORKERS = max(os.cpu_count() or 1, 2)


def evaluator_for(ray: RaySection, families: Sequence[str | None],
                  start_ray: bool = True,
                  engines: Mapping[EngineCommand, Sequence[str]] | None = None,
                  rough_seconds: float | None = None,
                  on_head_lost: Callable[[HeadLost], None] | None = None,
                  ) -> Evaluator:
    """The one place evaluators are built, for the tuning job, ``tune compare``, ``tune noise``
    and ``tune play``: Ray as the ``ray`` settings say (an embedded Ray with ``workers`` CPUs, or
    the cluster at ``address``), shipping the code of ``families`` (specs; None for an engine's
    player) and the files of ``engines`` (each engine's paths to ship) to its workers, or this
    process alone where ``plays_here`` says so. ``on_head_lost``: what says that a joined
    cluster's head was lost, before the process ends (``tuner.cluster.head_watch``)."""
    if plays_here(ray, start_ray, rough_seconds):
        return SerialEvaluator(ray.schedule, ray.max_retries)
    return RayEvaluator(ray.address, ray.workers, ray.schedule, ray.max_retries,
                        ray.no_worker_timeout, [f for f in families if f], ray.connect_timeout,
                        engines or {}, on_head_lost)


def plays_here(ray: RaySection, start_ray: bool = True, rough_seconds: float | None = None
               ) -> bool:
    """Whether a job's games are played in this process, not on Ray. Games of roughly less than
    ``SMALL_JOB_SECONDS`` of CPU time (``rough_seconds``, where the caller can tell) are, when
    neither workers nor an address were given: Ray could not finish them sooner. With
    ``start_ray`` False, so is one local worker (``tune play``'s default, and ``--workers 1`` of
    ``tune compare`` and ``tune noise``: starting Ray gives one worker nothing); the tuning job
    asked for ``--workers 1`` runs on Ray, which retries the units of a worker that dies."""
    if ray.address is not None:
        return False
    if ray.workers is None:
        return rough_seconds is not None and rough_seconds < SMALL_JOB_SECONDS
    return ray.workers == 1 and not start_ray


class RayEvaluator(_Backend):
    """Plays units as Ray tasks on an embedded local Ray or on an existing cluster.

    ``address``, ``workers`` and ``connect_timeout`` say which Ray (see ``RaySession``, which
    starts and ends it and says how it is protected). ``families``: the specs of every family
    the jobs will use, so that their code can be shipped when Ray starts (Ray uploads local code
    at ``ray.init`` only). Inside a Ray that someone else started, nothing is shipped and workers
    import family files by path. On a joined cluster, the head is watched: once it is lost,
    ``on_head_lost`` says so and the process ends (``tuner.cluster.head_watch``).

    Raises:
        ClusterConnectionError: Ray could not be started, or the cluster could not be joined.
        FamilyNotFound: a family file that cannot be read.
        KeyboardInterrupt: Ctrl-C or SIGTERM while Ray started (Ray is shut down again).
    """

    def __init__(
        self,
        address: str | None = None,
        workers: int | None = None,
        policy: SchedulePolicy | int | str = 16,
        max_retries: int = 3,
        no_worker_timeout: float = 60.0,
        families: Sequence[str] = (),
        connect_timeout: float = 60.0,
        engines: Mapping[EngineCommand, Sequence[str]] | None = None,
        on_head_lost: Callable[[HeadLost], None] | None = None,
    ):
        self.policy = SchedulePolicy.of(policy)
        self.times = GameTimes()
        self.max_retries = max_retries
        self.no_worker_timeout = no_worker_timeout
        self.worker_specs: dict[str, str] = {}
        self.worker_engines: dict[EngineCommand, EngineCommand] = {}
        self.session = RaySession(
            address, workers, lambda: self._ship(families, engines or {}), connect_timeout)
        ray = self.ray = self.session.ray
        self.leftovers: list = []  # refs of speculative units no schedule needs any more
        self._ray_messages = contextlib.ExitStack()
        self.head_watch = None
        try:
            if self.session.head:
                self.head_watch = HeadWatch(self.session.head, address, on_head_lost)
            self._ray_messages.enter_context(ray_api.ray_messages_to(
                functools.partial(events.ray_said, logs=self.session.logs)))
            self.nodes = events.NodeWatch(ray.nodes)
            self.workers = self._cpus()
            self.present = throughput.CpuTime(self.workers, time.perf_counter())
            # a unit an external engine failed is played again, as one lost with its worker
            self._remote = ray.remote(num_cpus=1, max_retries=max_retries,
                                      retry_exceptions=[EngineLost])(play_unit)
        except BaseException:  # Ctrl-C, say: no evaluator is returned, so none will close Ray
            self.close()
            raise

    def _ship(self, families: Sequence[str], engines: Mapping[EngineCommand, Sequence[str]]
              ) -> dict:
        """The runtime_env that brings these families' code and engines' files to every
        worker, with an empty working directory (``empty_working_dir``: the driver's own would
        shadow modules there), and the spec each family goes by on the workers: a family file
        travels in a package of its own, named after its path and content (``ship_family``), so
        that two files of one name never collide there; so do an engine's files, which its
        workers start it among (``ship_engine``)."""
        shipped = []
        for spec in dict.fromkeys(families):
            module, on_workers = ship_family(spec)
            if module is None:
                continue
            shipped.append(module)
            self.worker_specs[spec] = on_workers
        for engine, paths in engines.items():
            if paths:
                folder, self.worker_engines[engine] = ship_engine(engine, paths)
                shipped.append(folder)
        runtime_env = {"working_dir": str(empty_working_dir()), "excludes": SHIP_EXCLUDES}
        if shipped:
            runtime_env["py_modules"] = list(dict.fromkeys(shipped))
        return runtime_env

    def run(self, jobs: Sequence[Job], schedule: Schedule,
            progress: Callable[[int], None] | None = None):
        # On an error or an interrupt, the units still in flight are left to finish or to end
        # with Ray: ray.cancel races with a unit that is finishing and has crashed the driver
        # inside Ray's core ("Tried to complete task that was not pending").
        self.refresh_cpus()
        depth = jobs[0].spec.depth if jobs else 1
        return drive(schedule, _RayUnits(self, jobs), self.policy, self.times, depth, progress)

    def describe(self) -> str:
        return f"Ray: {self.session.describe()}"

    def _cpus(self) -> int:
        """The cluster's CPUs now: nodes come and go while a run lasts."""
        return int(self.ray.cluster_resources().get("CPU", 0))

    def refresh_cpus(self) -> None:
        """Count the cluster's CPUs again, for the schedule and the unit size alike, and for
        the CPU-seconds present (``cpu_seconds``)."""
        self.workers = self._cpus()
        self.present.count(self.workers, time.perf_counter())

    def cpu_seconds(self, start: float, end: float) -> float:
        return self.present.between(start, end)

    def _for_workers(self, spec: PlayerSpec | EnginePlayer) -> PlayerSpec | EnginePlayer:
        """``spec`` as the workers find what it names: a family file or an engine where Ray
        unpacked the files shipped with the job."""
        if isinstance(spec, EnginePlayer):
            engine = self.worker_engines.get(spec.engine, spec.engine)
            return dataclasses.replace(spec, engine=engine) if engine != spec.engine else spec
        family = self.worker_specs.get(spec.family, spec.family)
        return dataclasses.replace(spec, family=family) if family != spec.family else spec

    def _get(self, ref, job: Job) -> list[GameResult]:
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as err:
            interrupts.check()  # a worker that Ctrl-C reached too: the interrupt is what counts
            cause = getattr(err, "cause", None)
            if isinstance(cause, Tune2048Error):
                # one line already: the family's own code failed there (FamilyCodeError), or it
                # cannot be loaded there
                raise cause from None
            if isinstance(cause, (GameCrash, WrongCode)):
                raise EvaluationError(str(cause.args[0] if cause.args else cause)) from None
            if isinstance(cause, EngineLost):
                raise EvaluationError(engine_lost_text(job, self.max_retries, cause)) from None
            raise EvaluationError(f"candidate {job.candidate}: a unit of work failed: {err}") from None
        except ray.exceptions.RayError as err:
            if type(err).__name__ in RAYLET_LOST:
                self._settle()
            raise EvaluationError(
                f"candidate {job.candidate}: a unit of work failed after {self.max_retries} "
                f"retries ({type(err).__name__}): {str(err).splitlines()[0] if str(err) else ''}"
            ) from None

    def _check_workers(self, since: float | None) -> float | None:
        """Fail when no CPU has been alive in the cluster for a while; return the clock."""
        alive_cpus = sum(
            node.get("Resources", {}).get("CPU", 0)
            for node in self.ray.nodes()
            if node.get("Alive")
        )
        if alive_cpus > 0:
            return None
        now = time.monotonic()
        if since is None:
            log.warning("no Ray worker with a CPU is alive; waiting for one to come back")
            return now
        if now - since > self.no_worker_timeout:
            self._settle()
            raise EvaluationError(
                f"every Ray worker is gone (no CPU alive for {self.no_worker_timeout:g} s)"
            )
        return since

    def _settle(self) -> None:
        """A failure that a lost head gives too (tasks lost with their raylet or node, no CPU
        left) is about to be reported: where it is the head's loss, the head's watch says that
        instead (and ends the process)."""
        if self.head_watch is not None:
            self.head_watch.settle()

    def close(self) -> None:
        """End the Ray this evaluator started (see ``RaySession.close``), then let Ray print its
        messages again. Safe to call twice. The head is watched until then: leaving a cluster
        whose head is gone waits on Ray."""
        try:
            self.session.close()
        finally:
            if self.head_watch is not None:
                self.head_watch.close()
            self._ray_messages.close()


class _RayUnits:
    """One schedule's units as Ray tasks of ``evaluator``. Each task carries its job's player
    spec as a plain argument: a spec is a few hundred bytes, which Ray sends inside the task
    itself, where putting it in the object store would cost the driver about 0.7 ms a job (at
    depth 1 on hundreds of CPUs, more than the candidate's games take). Units that a finished
    schedule leaves in flight are the evaluator's ``leftovers`` until they end (each holds a
    CPU until then)."""

    CPU_REFRESH_SECONDS = 2.0

    def __init__(self, evaluator: RayEvaluator, jobs: Sequence[Job]):
        self.evaluator = evaluator
        self.ray = evaluator.ray
        self.jobs = jobs
        self.worker_specs: dict[int, PlayerSpec | EnginePlayer] = {}  # job -> its spec there
        self.pending: dict = {}  # ref -> unit
        self.code = installed.code()
        self.cpus_at = time.monotonic()

    def cpus(self) -> int:
        return self.evaluator.workers

    def idle(self) -> int:
        evaluator = self.evaluator
        if time.monotonic() - self.cpus_at >= self.CPU_REFRESH_SECONDS:
            evaluator.refresh_cpus()
            self.cpus_at = time.monotonic()
        if evaluator.leftovers:
            _finished, evaluator.leftovers = self.ray.wait(
                evaluator.leftovers, num_returns=len(evaluator.leftovers), timeout=0)
        return max(0, evaluator.workers - len(self.pending) - len(evaluator.leftovers))

    def submit(self, unit: Unit) -> None:
        if unit.job not in self.worker_specs:
            self.worker_specs[unit.job] = self.evaluator._for_workers(self.jobs[unit.job].spec)
        ref = self.evaluator._remote.remote(self.jobs[unit.job].candidate,
                                            self.worker_specs[unit.job], list(unit.seeds),
                                            self.code)
        self.pending[ref] = unit

    def wait(self, count: int) -> list[tuple[Unit, list[GameResult]]]:
        """Polls until ``count`` units have finished (or some have, at a poll), checking
        meanwhile that the cluster has a CPU and saying which nodes left or joined."""
        no_worker_since = None
        idle_since = time.monotonic()
        timeout = self.evaluator.no_worker_timeout
        while True:
            if self.evaluator.nodes.poll():  # counted at once: Ray starts queued tasks there
                self.evaluator.refresh_cpus()
            refs = list(self.pending)
            done, rest = self.ray.wait(refs, num_returns=min(count, len(refs)),
                                       timeout=POLL_SECONDS)
            if done and rest:
                more, _ = self.ray.wait(rest, num_returns=len(rest), timeout=0)
                done += more
            if done:
                break
            if time.monotonic() - idle_since >= min(5.0, timeout / 2):
                no_worker_since = self.evaluator._check_workers(no_worker_since)
                idle_since = time.monotonic()
        units = [self.pending.pop(ref) for ref in done]
        try:
            fetched = self.ray.get(done)  # one call for all: a call per unit costs the driver
        except self.ray.exceptions.RayError:
            # the failing unit, found and reported as such
            fetched = [self.evaluator._get(ref, self.jobs[u.job]) for ref, u in zip(done, units)]
        return list(zip(units, fetched))

    def abandon(self) -> None:
        self.evaluator.leftovers.extend(self.pending)
        self.pending.clear()
