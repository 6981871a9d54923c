"""What ``tune run`` and ``tune resume`` share: their Ray options, and carrying a tuning run out
with a log file, saying its price as it starts and at its end how to go on.

Exit status: 0 when the run reached a stop condition, 130 on Ctrl-C or SIGTERM (the last
checkpoint is kept), 1 when games could not be played or the run's files could not be written (a
full disk). Before a run's first checkpoint a failure or an interrupt leaves nothing behind
(``tuner.store.run_dir``), and the message says how to start again, or is bad input (exit status 2:
the family's own code failed, say); after it, the checkpoint is kept and the message says how to
resume.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import threading

from engine.atomic import check_target
from engine.errors import BadInput, Failure
from engine.stats import counted
from tuner import commands, interrupts
from tuner.cli.options import ENVIRONMENT_ERRORS
from tuner.errors import EvaluationError
from tuner.store import checkpoint as ckpt

log = logging.getLogger("tuner")
# Loading the engine's compiled code takes about a second; longer, numba is compiling it (tens of
# seconds, the first time after an install or an engine change): the run says so, not silence.
COMPILING_AFTER_SECONDS = 3.0


def show_progress(args: argparse.Namespace) -> bool:
    return not args.quiet and sys.stderr.isatty()


def execute(run, args: argparse.Namespace) -> int:
    """Run a ``TuningRun`` until it stops, logging to its directory's ``run.log`` too.
    The caller closes the run's store."""
    from tuner.analysis.price import rough_cpu_seconds_left  # numpy code, once a run is ready
    from tuner.cluster.ray_evaluator import evaluator_for  # Ray, once a run is ready (start-up)
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.live_status import LiveStatus

    check_target(run.store.log_file)  # not a FIFO (opening it would block) or a link
    file_handler = _RunLog(run.store.log_file)
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(file_handler)
    evaluator = status = None
    outcome = ("failed", "an error (see the terminal)")  # status.json's, unless said below
    try:
        config = run.config
        log.info("run %s: %s, depth %s, %d tuned parameters, %s", config.run.name,
                 config.player_name, config.search.depth, len(config.tuned),
                 config.evaluation.games.describe() + (
                     "" if config.strategy.implied else f", strategy {config.strategy.name}"))
        status = LiveStatus(config, run.store, run.state, _idle_rate(run))
        status.begin(run.resume_line() if run.state.generation else f"started run "
                     f"{config.run.name}")
        left = rough_cpu_seconds_left(config, run.state.games)
        evaluator = evaluator_for(config.ray, [config.family], engines=config.shipped,
                                  rough_seconds=left)
        interrupts.check()
        here = isinstance(evaluator, SerialEvaluator)  # a small run: Ray would not be sooner
        if here:
            log.info("games in this process (1 CPU): fewer than starting Ray would pay for; on "
                     "Ray:\n  %s", on_ray(run, args))
        else:
            log.info("games on %s", evaluator.describe())
        log.info("%s", price_line(run, evaluator.workers, here))
        state = run.run(evaluator, observers=[status])
        interrupts.check()  # one that came during the last moments of the run
        if run.stopped_on_request:
            outcome = ("stopped", f"stopped on request after generation {state.generation}"
                                  + " (tune stop)")
            log.info("stopped on request after generation %d (checkpointed); resume with:\n"
                     "  %s", state.generation, resume_command(run, args))
            return 0
        log.info("done: %s; best weights in %s", state.stop_reason,
                 run.run_dir / ckpt.BEST_FILE)
        return 0
    except KeyboardInterrupt as interrupt:
        how = f"interrupted{interrupts.describe(interrupt)}"
        outcome = ("interrupted", f"{how} after generation {run.state.generation}")
        if run.checkpointed:
            log.warning("%s after generation %d (checkpointed); resume with:\n  %s",
                        how, run.state.generation, resume_command(run, args))
        else:
            log.warning("%s before the first generation completed (nothing to resume); "
                        "start it again with:\n  %s", how, start_again(run, args))
        return 130
    except BadInput as err:
        if not run.checkpointed:
            raise  # nothing was kept: bad input, exit status 2
        outcome = _failed(run, err)
        log.error("tune: error: stopped after generation %d (checkpointed): %s",
                  run.state.generation, err)
        from engine.families.errors import FamilyCodeError  # here only to keep start-up fast

        if isinstance(err, FamilyCodeError):
            log.error("fix the family's code, then resume with:\n  %s",
                      resume_command(run, args))
        return Failure.exit_code
    except OSError as err:  # a full disk, a directory made read-only under the run
        if err.errno not in ENVIRONMENT_ERRORS:
            raise  # a bug: its traceback
        what = f"cannot write {err.filename}: {err.strerror}" if err.filename else str(err)
        outcome = _failed(run, what)
        if run.checkpointed:
            kept = _checkpointed_generation(run.run_dir)
            log.error("tune: error: stopped: %s; the checkpoint of generation %s is kept: "
                      "make room (or fix the permissions), then resume with:\n  %s",
                      what, kept, resume_command(run, args))
        else:
            log.error("tune: error: stopped before the first generation completed: %s; nothing "
                      "was kept: start it again with:\n  %s", what, start_again(run, args))
        return Failure.exit_code
    except EvaluationError as err:
        outcome = _failed(run, err)
        if run.checkpointed:
            log.error("tune: error: stopped after generation %d (checkpointed): %s\nresume "
                      "with:\n  %s", run.state.generation, err, resume_command(run, args))
            if _cluster_not_joined(run, err):
                log.error("or resume it on this machine:\n  %s",
                          resume_command(run, args, address="local"))
        else:
            log.error("tune: error: stopped before the first generation completed: %s\nstart "
                      "it again with:\n  %s", err, start_again(run, args))
        return err.exit_code
    finally:
        if evaluator is not None:
            evaluator.close()
        log.removeHandler(file_handler)
        file_handler.close()
        if status is not None and status.ended is None:  # "done" is the observer's to say
            with interrupts.held() as caught, contextlib.suppress(OSError, BadInput):
                status.end(*outcome)  # whole (a full disk: the message said what happened)
            interrupts.raise_if_any(caught)


def price_line(run, cpus: int, here: bool = False) -> str:
    """The price of what is left of ``run`` on ``cpus`` CPUs (``here``: in this process), in one
    line: at the game time its own generations recorded when it has played some (a resumed
    run), else the rough one for its depth (a run plays no game to price itself)."""
    from tuner.analysis import price  # numpy code: loaded already, the run has started

    config, state = run.config, run.state
    game_time = (price.recorded(state.cluster, state.games, "recorded by this run")
                 or price.rough_game_time(config))
    if game_time is None:  # an external engine's, before it has played
        games = price.most_games(config, cpus).total
        return (f"price: at most {counted(games, 'game')}; the game time of {config.player_name} "
                f"is known after a generation (measured now by: "
                f"{commands.tune('--config', config.source, '--dry-run')})")
    result = price.price(config, cpus, game_time, state.games, here)
    return price.summary(result, cpus, config, "price of what is left" if state.games else "price")


def _idle_rate(run) -> float | None:
    """One idle core's positions per second at the run's settings, measured here before any
    game starts (``tuner.games.throughput``): None where it could not be measured (the
    family's code failing, say, which the run's own games then report)."""
    from tuner.games.throughput import calibrate  # the engine: once a run is ready (start-up)

    if run.config.engine is not None:
        return None  # an external engine counts its positions its own way, or not at all
    start = run.strategy.result.mean if run.strategy is not None else run.space.initial()
    try:
        with _said_if_slow(COMPILING_AFTER_SECONDS, "compiling the engine for this heuristic: "
                           "tens of seconds the first time, then loaded from numba's cache"):
            return calibrate(run.config.player(run.space.weights(start)))
    except Exception:
        log.debug("the one-core calibration failed", exc_info=True)
        return None


@contextlib.contextmanager
def _said_if_slow(seconds: float, line: str):
    """Log ``line`` if the block is still running after ``seconds``."""
    timer = threading.Timer(seconds, log.info, args=("%s", line))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _failed(run, error: Exception | str) -> tuple[str, str]:
    """The final state and event ``status.json`` gets for ``error``."""
    what = str(error).splitlines()[0] if str(error) else type(error).__name__
    return "failed", f"stopped after generation {run.state.generation}: {what}"


class _RunLog(logging.FileHandler):
    """``run.log``: a line that cannot be written there (a full disk) is dropped without the
    traceback ``logging`` would print; the terminal shows the same lines."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def start_again(run, args: argparse.Namespace) -> str:
    """The command that starts again a run that has no checkpoint yet: the same command."""
    if args.command == "run":
        overwrite = ["--overwrite"] if args.overwrite else []
        return commands.tune("run", args.config, *overwrite, *_ray_options(args))
    return resume_command(run, args)


def on_ray(run, args: argparse.Namespace) -> str:
    """This command with ``--workers``: the same run, its games played on Ray (a new run
    replaces the one this command makes: ``--overwrite``)."""
    from tuner.cluster.ray_evaluator import ON_RAY_WORKERS  # loaded already: the run started

    if args.command == "run":
        return commands.tune("run", args.config, "--overwrite", "--workers",
                             str(ON_RAY_WORKERS))
    args = argparse.Namespace(**{**vars(args), "workers": ON_RAY_WORKERS})
    return resume_command(run, args)


def resume_command(run, args: argparse.Namespace, address: str | None = None) -> str:
    """``tune resume RUN_DIR`` with what this command was given that a resume takes: an edited
    config and ``--family-changed`` (a resume's), ``--workers`` and ``--address`` (``address``
    in place of the one given)."""
    words = ["resume", run.run_dir]
    if args.command == "resume":
        words += ["--config", args.config] if args.config else []
        words += ["--family-changed"] if args.family_changed else []
    return commands.tune(*words, *_ray_options(args, address))


def _ray_options(args: argparse.Namespace, address: str | None = None) -> list:
    given = {"workers": args.workers, "address": address or args.address}
    return [word for name, value in given.items() if value is not None
            for word in (f"--{name}", value)]


def _cluster_not_joined(run, err: EvaluationError) -> bool:
    """Whether the games stopped because the run's cluster (saved, or given now) could not be
    joined: a run's results do not depend on where it plays, so it may go on on this machine."""
    from tuner.cluster.ray_join import ClusterConnectionError  # Ray's helpers: only when one failed

    return isinstance(err, ClusterConnectionError) and run.config.ray.address is not None


def _checkpointed_generation(run_dir) -> str:
    """The generation of the checkpoint on disk ('?' if it cannot be read). Not checked
    against config.yaml: a resume with changed options has written its own config there, which
    it puts back only as it exits, after this is said."""
    path = run_dir / ckpt.CHECKPOINT_FILE
    try:
        return str(ckpt.decode_state(path.read_bytes(), path).generation)
    except (BadInput, OSError, AttributeError):  # unreadable, or not a run's state
        return "?"
