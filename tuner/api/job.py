"""A tuning job: a run started (``start_run``) or resumed (``tuner.api.resumed``) and carried out
to its end (``carry_out``), with its lines in the run's ``run.log`` as well, a live status
(``status.json``), its price said as it starts and, as it ends, what to do next. ``tune run`` and
``tune resume`` are a parse and a call of these; ``run`` and ``resume`` are the same calls from
Python, so either way a run writes the same files and says the same lines.

The start is one pass: the config is read and resolved once, then priced at the game time
``tune run --dry-run`` prices it at (``tuner.analysis.timing.game_time``: a new run times its
games here, which also gives ``tune status`` its idle-core figure), then its evaluator is chosen
(roughly priced, to tell a run too small for Ray) and its price said for the evaluator's CPUs,
then the loop runs. A wait longer than a few seconds on the way (numba compiling the engine, the
timing, Ray starting) is said as it goes on.

Exit status (``Outcome.exit_code``): 0 when the run reached a stop condition or was stopped on
request, 130 on Ctrl-C or SIGTERM (the last checkpoint is kept), 1 when games could not be played
or the run's files could not be written (a full disk). A cluster's head lost ends the process
with 75 once the job has said so (``tuner.cluster.head_watch``). Before a run's first checkpoint a failure
or an interrupt leaves nothing behind (``tuner.store.run_dir``), and the message says how to start
again, or is bad input, raised (exit status 2 from ``tune``: the family's own code failed, say);
after it, the checkpoint is kept and the message says how to resume.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engine.atomic import check_target
from engine.errors import BadInput, Failure
from engine.stats import counted
from tuner import commands, interrupts
from tuner.api.launch import RUN, Launch
from tuner.cluster.events import RunLogFormat
from tuner.config import RESUMABLE_CHANGES, RunConfig, changed_keys
from tuner.errors import ENVIRONMENT_ERRORS, CheckpointError, EvaluationError
from tuner.games.progress import said_if_slow
from tuner.store import checkpoint as ckpt

if TYPE_CHECKING:
    from tuner.analysis.price import GameTime
    from tuner.cluster.head_watch import HeadLost
    from tuner.config import RaySection
    from tuner.loop.live_status import LiveStatus
    from tuner.loop.observers import Observer
    from tuner.loop.run import TuningRun
    from tuner.store.checkpoint import RunState

log = logging.getLogger("tuner")
# How a job ended (``Outcome.status``): status.json's final states, and a resumed run that had
# nothing left to do.
DONE, STOPPED, INTERRUPTED, FAILED, FINISHED = (
    "done", "stopped", "interrupted", "failed", "finished")


@dataclass(frozen=True)
class Outcome:
    """How a job ended. ``status``: done (a stop condition, then validation), stopped (on
    request), interrupted, failed, or finished (a resume of a run that had ended: nothing was
    done). ``exit_code``: the exit status ``tune`` gives it. ``generation``: the last one
    checkpointed. ``message``: the job's last words, as logged, with the command that goes on
    where there is one."""

    status: str
    exit_code: int
    run_dir: Path
    generation: int
    message: str


def run(config: str | os.PathLike, *, overwrite: bool = False, workers: int | None = None,
        address: str | None = None, observers: Sequence[Observer] = (),
        progress: bool = False) -> Outcome:
    """Start a tuning run from the config file ``config`` and carry it out, as ``tune run
    CONFIG`` does, with the same files, lines and outcome. ``workers`` and ``address``: where
    games are played (``--workers``, ``--address``); ``overwrite``: replace the run in the run
    directory once the new one has a checkpoint; ``observers``: watch the run beside its own
    (``tuner.loop.observers.Observer``); ``progress``: progress bars on stderr.

    Raises ``BadInput`` (``ConfigError``, ``CheckpointError``, ...) for what ``tune`` refuses
    with exit status 2, before anything is written."""
    launch = Launch.of(RUN, config, overwrite=overwrite, workers=workers, address=address)
    return start_run(launch.load(), launch, progress, observers)


def stop(run_dir: str | os.PathLike) -> None:
    """Ask the job running ``run_dir`` (in this process or another) to stop once its current
    generation is checkpointed, as ``tune stop RUN_DIR`` does; ``CheckpointError`` when no job
    runs there."""
    from tuner.store.run_dir import request_stop  # the run directory's locks (start-up)

    request_stop(Path(run_dir))


def start_run(config: RunConfig, launch: Launch, progress: bool = False,
              observers: Sequence[Observer] = ()) -> Outcome:
    """A fresh run of ``config`` (its options applied), in a run directory of its own, carried
    out (``carry_out``)."""
    resolved = config.resolved()
    from tuner.store.store import DirectoryStore  # once the config is known good (start-up)

    store = DirectoryStore.new(config.run_dir, launch.overwrite, same_run(config, resolved),
                               launch.resume_options())
    try:
        from tuner.loop.run import TuningRun  # the engine and pycma, once the config is known good

        started = TuningRun.start(config, store, progress=progress, resolved=resolved)
        return carry_out(started, launch, observers)
    finally:
        store.close()  # a run that wrote no checkpoint leaves nothing behind


def same_run(config: RunConfig, resolved: dict) -> bool:
    """Whether the run directory's stored config is this one (``resolved``), but for what a
    resume may change."""
    try:
        stored = ckpt.read_stored_config(config.run_dir)
    except CheckpointError:
        return False
    return all(k in RESUMABLE_CHANGES for k in changed_keys(stored, resolved))


def carry_out(run: TuningRun, launch: Launch, observers: Sequence[Observer] = ()) -> Outcome:
    """Run ``run`` until it stops, its lines in its directory's ``run.log`` too, its status in
    ``status.json``; the caller closes the run's store."""
    from tuner.cluster.ray_evaluator import (  # Ray, once a run is ready (start-up)
        ON_RAY_WORKERS,
        evaluator_for,
    )
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.live_status import LiveStatus

    evaluator = status = None
    ended = (FAILED, "an error (see the terminal)")  # status.json's, unless said below
    with _run_log(run.store.log_file):
        try:
            config = run.config
            log.info("run %s: %s, depth %s, %d tuned parameters, %s", config.run.name,
                     config.player_name, config.search.depth, len(config.tuned),
                     config.evaluation.games.describe() + (
                         "" if config.strategy.implied else f", strategy {config.strategy.name}"))
            status = LiveStatus(config, run.store, run.state, resume=launch.kept_options())
            status.begin(run.resume_line() if run.state.generation else f"started run "
                         f"{config.run.name}")
            quote = Quote.of(config, run.state)
            status.idle_rate = quote.idle_rate or _idle_rate(run)
            with said_if_slow(_starting(config.ray)):
                evaluator = evaluator_for(config.ray, [config.family], engines=config.shipped,
                                          rough_seconds=quote.rough_seconds,
                                          on_head_lost=_head_lost(run, launch, status))
            interrupts.check()
            here = isinstance(evaluator, SerialEvaluator)  # a small run: Ray would not be sooner
            if here:
                log.info("games in this process (1 CPU): fewer than starting Ray would pay for; "
                         "on Ray:\n  %s", launch.on_ray(run.run_dir, ON_RAY_WORKERS))
            else:
                log.info("games on %s", evaluator.describe())
            log.info("%s", quote.line(config, run.state.games, evaluator.workers, here))
            state = run.run(evaluator, observers=[status, *observers])
            interrupts.check()  # one that came during the last moments of the run
            if run.stopped_on_request:
                stopped = f"stopped on request after generation {state.generation}"
                ended = (STOPPED, f"{stopped} (tune stop)")
                return _said(run, STOPPED, 0, logging.INFO, f"{stopped} (checkpointed); resume "
                             f"with:\n  {launch.resume_command(run.run_dir)}")
            return _said(run, DONE, 0, logging.INFO, f"done: {state.stop_reason}; best weights "
                                                     f"in {run.run_dir / ckpt.BEST_FILE}")
        except KeyboardInterrupt as interrupt:
            how = f"interrupted{interrupts.describe(interrupt)}"
            ended = (INTERRUPTED, f"{how} after generation {run.state.generation}")
            if run.checkpointed:
                return _said(run, INTERRUPTED, 130, logging.WARNING,
                             f"{how} after generation {run.state.generation} (checkpointed); "
                             f"resume with:\n  {launch.resume_command(run.run_dir)}")
            if (kept := _kept(run)) is not None:
                return _said(run, INTERRUPTED, 130, logging.WARNING,
                             f"{how} before the first generation completed; {kept}, and "
                             f"starting it again plays them no more:\n  "
                             f"{launch.start_again(run.run_dir)}")
            return _said(run, INTERRUPTED, 130, logging.WARNING,
                         f"{how} before the first generation completed (nothing to resume); "
                         f"start it again with:\n  {launch.start_again(run.run_dir)}")
        except BadInput as err:
            if not run.checkpointed:
                raise  # nothing was kept: bad input, exit status 2
            ended = _failed(run, err)
            stopped = f"tune: error: stopped after generation {run.state.generation}"
            lines = [f"{stopped} (checkpointed): {err}"]
            from engine.families.errors import FamilyCodeError  # here only to keep start-up fast

            if isinstance(err, FamilyCodeError):
                lines.append(f"fix the family's code, then resume with:\n  "
                             f"{launch.resume_command(run.run_dir)}")
            return _said(run, FAILED, Failure.exit_code, logging.ERROR, *lines)
        except OSError as err:  # a full disk, a directory made read-only under the run
            if err.errno not in ENVIRONMENT_ERRORS:
                raise  # a bug: its traceback
            what = f"cannot write {err.filename}: {err.strerror}" if err.filename else str(err)
            ended = _failed(run, what)
            if run.checkpointed:
                kept = _checkpointed_generation(run.run_dir)
                return _said(run, FAILED, Failure.exit_code, logging.ERROR,
                             f"tune: error: stopped: {what}; the checkpoint of generation {kept} "
                             f"is kept: make room (or fix the permissions), then resume with:\n"
                             f"  {launch.resume_command(run.run_dir)}")
            kept = _kept(run)
            again = ("nothing was kept: start it again" if kept is None else
                     f"{kept}: make room, then start it again (it plays them no more)")
            return _said(run, FAILED, Failure.exit_code, logging.ERROR,
                         f"tune: error: stopped before the first generation completed: {what}; "
                         f"{again} with:\n  {launch.start_again(run.run_dir)}")
        except EvaluationError as err:
            ended = _failed(run, err)
            return _games_failed(run, launch, err)
        finally:
            if evaluator is not None:
                evaluator.close()
            if status is not None and status.ended is None:  # "done" is the observer's to say
                with interrupts.held() as caught, contextlib.suppress(OSError, BadInput):
                    status.end(*ended)  # whole (a full disk: the message said what happened)
                interrupts.raise_if_any(caught)


def _kept(run: TuningRun) -> str | None:
    """What a run stopped before its first checkpoint kept (its games, ``tuner.games.kept``),
    in words; None where it kept none."""
    if run.kept is None or not run.kept.count:
        return None
    return f"the {counted(run.kept.count, 'game')} it played are kept"


def _games_failed(run: TuningRun, launch: Launch, err: EvaluationError) -> Outcome:
    """Say that the games could not be played, with the command that goes on: resume the run
    (or start it again, before its first checkpoint), and where its cluster is gone, the same
    on this machine."""
    here = _cluster_gone(run, err)
    if not run.checkpointed:
        lines = [f"tune: error: stopped before the first generation completed: {err}",
                 f"start it again with:\n  {launch.start_again(run.run_dir)}"]
        if here:
            lines.append(f"or start it on this machine:\n  "
                         f"{launch.start_again(run.run_dir, address='local')}")
        return _said(run, FAILED, err.exit_code, logging.ERROR, *lines)
    stopped = f"stopped after generation {run.state.generation} (checkpointed)"
    lines = [f"tune: error: {stopped}: {err}",
             f"resume with:\n  {launch.resume_command(run.run_dir)}"]
    if here:
        lines.append(f"or resume it on this machine:\n  "
                     f"{launch.resume_command(run.run_dir, address='local')}")
    return _said(run, FAILED, err.exit_code, logging.ERROR, *lines)


def _head_lost(run: TuningRun, launch: Launch, status: LiveStatus) -> Callable[[HeadLost], None]:
    """What the job says when its cluster's head is lost: said by the head's watch, from its
    own thread while this one waits in Ray, before it ends the process
    (``tuner.cluster.head_watch``): the lines of games that could not be played, and the final
    state in ``status.json``."""

    def report(lost: HeadLost) -> None:
        _games_failed(run, launch, lost)
        if status.ended is None:
            with contextlib.suppress(OSError, BadInput):
                status.end(*_failed(run, lost))

    return report


def _said(run: TuningRun, status: str, code: int, level: int, *lines: str) -> Outcome:
    """Log ``lines`` at ``level``, each as one record; the outcome they end the job with."""
    for line in lines:
        log.log(level, "%s", line)
    return Outcome(status, code, run.run_dir, run.state.generation, "\n".join(lines))


@contextlib.contextmanager
def _run_log(path: Path) -> Iterator[None]:
    """The job's lines in ``run.log`` as well as wherever the caller's logging shows them:
    every line from INFO up, whatever the caller's level (``tune --verbose``: debug lines too)."""
    check_target(path)  # not a FIFO (opening it would block) or a link
    handler = _RunLog(path)
    handler.setFormatter(RunLogFormat())  # a date and time a line, once
    level = log.level
    if log.getEffectiveLevel() > logging.INFO:
        log.setLevel(logging.INFO)
    log.addHandler(handler)
    try:
        yield
    finally:
        log.removeHandler(handler)
        handler.close()
        log.setLevel(level)


class _RunLog(logging.FileHandler):
    """``run.log``: a line that cannot be written there (a full disk) is dropped without the
    traceback ``logging`` would print; the terminal shows the same lines."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


@dataclass(frozen=True)
class Quote:
    """What a job knows of its price before it plays: the game time it prices at, the one
    ``--dry-run`` prices at (``tuner.analysis.timing.game_time``: recorded by the run's own
    generations when it has played some, else by an earlier run in its run directory, else
    measured now, an external engine's games too; None where an external engine's timing
    failed: it has no rough figure, and the run's own games report the failure), and roughly
    the CPU time its games have left, at the rough figure for its depth (``plays_here``: a run
    Ray cannot shorten)."""

    game_time: GameTime | None
    rough_seconds: float | None

    @classmethod
    def of(cls, config: RunConfig, state: RunState) -> Quote:
        # the engine and numpy: loaded already, the run has started
        from tuner.analysis import price, timing

        try:
            game_time = timing.game_time(config, state.cluster, state.games)
        except Exception:  # the family's code failing, say: the run's own games report it
            log.debug("the game time could not be measured", exc_info=True)
            game_time = price.rough_game_time(config)
        return cls(game_time, price.rough_cpu_seconds_left(config, state.games))

    @property
    def idle_rate(self) -> float | None:
        """One idle core's positions per second, where games were timed now."""
        return self.game_time.idle_rate if self.game_time is not None else None

    def line(self, config: RunConfig, played: int, cpus: int, here: bool = False) -> str:
        """The price of what is left of a run of ``config`` that has played ``played``
        training games, on ``cpus`` CPUs (``here``: in this process), in one line."""
        from tuner.analysis import price  # numpy code: loaded already, the run has started

        if self.game_time is None:  # an external engine's whose timing failed
            games = price.most_games(config, cpus).total
            return (f"price: at most {counted(games, 'game')}; the game time of "
                    f"{config.player_name} is known after a generation (measured now by: "
                    f"{commands.tune('--config', config.source, '--dry-run')})")
        result = price.price(config, cpus, self.game_time, played, here)
        return price.summary(result, cpus, config,
                             "price of what is left" if played else "price")


def _idle_rate(run: TuningRun) -> float | None:
    """One idle core's positions per second at the run's settings, measured here before any
    game starts (``tuner.games.throughput``), where the price timed no games: None where it
    could not be measured (the family's code failing, say, which the run's own games then
    report)."""
    from tuner.games.throughput import calibrate  # the engine: once a run is ready (start-up)

    if run.config.engine is not None:
        return None  # an external engine counts its positions its own way, or not at all
    start = run.strategy.result.mean if run.strategy is not None else run.space.initial()
    try:
        return calibrate(run.config.player(run.space.weights(start)))
    except Exception:
        log.debug("the one-core calibration failed", exc_info=True)
        return None


def _starting(ray: RaySection) -> str:
    """What the job waits for while its evaluator starts."""
    if ray.address is not None:
        return f"joining the Ray cluster at {ray.address}"
    return "starting Ray on this machine, and its workers"


def _failed(run: TuningRun, error: Exception | str) -> tuple[str, str]:
    """The final state and event ``status.json`` gets for ``error``."""
    what = str(error).splitlines()[0] if str(error) else type(error).__name__
    return FAILED, f"stopped after generation {run.state.generation}: {what}"


def _cluster_gone(run: TuningRun, err: EvaluationError) -> bool:
    """Whether the games stopped because the run's cluster (saved, or given now) could not be
    joined, or its head was lost: a run's results do not depend on where it plays, so it may go
    on on this machine."""
    from tuner.cluster.head_watch import HeadLost  # Ray's helpers: only when one failed
    from tuner.cluster.ray_join import ClusterConnectionError

    return isinstance(err, ClusterConnectionError | HeadLost) and run.config.ray.address is not None


def _checkpointed_generation(run_dir: Path) -> str:
    """The generation of the checkpoint on disk ('?' if it cannot be read). Not checked
    against config.yaml: a resume with changed options has written its own config there, which
    it puts back only as it exits, after this is said."""
    path = run_dir / ckpt.CHECKPOINT_FILE
    try:
        return str(ckpt.decode_state(path.read_bytes(), path).generation)
    except (BadInput, OSError, AttributeError):  # unreadable, or not a run's state
        return "?"
