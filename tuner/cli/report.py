"""``tune report RUN_DIR``: a run's summary table, and under it ``tune status``'s lines while the
run works (or died working); its convergence plot only when asked (``--plot``), so that reading
a run, a shipped one included, writes nothing. A plot asked for that cannot be written (a
target tune may not write, matplotlib missing) is refused before anything is read or printed."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from engine.atomic import UnwritableTarget, check_target, unused_path
from tuner import commands
from tuner.analysis import report
from tuner.analysis.liveness import status_lines
from tuner.cli.options import UsageError
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import RUN_FILES, Holds, holds
from tuner.store.status_file import RUNNING, read_status

IN_RUN_DIR = object()  # --plot without a file: RUN_DIR/convergence.png


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "report", parents=[common], help="summarise a run; plot its convergence with --plot",
        description="Print a run's summary table. Writes nothing unless --plot is given.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory, e.g. outputs/quick")
    parser.add_argument("--plot", nargs="?", const=IN_RUN_DIR, metavar="FILE",
                        help=f"also write the convergence plot, to FILE (default: "
                             f"RUN_DIR/{report.PLOT_FILE}); needs matplotlib")
    parser.add_argument("--no-plot", action="store_true",
                        help="write no plot: the default since 0.2, accepted for old scripts")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    run_dir = ckpt.run_directory(args.run_dir)
    if not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: no such run directory")
    if args.plot is not None and args.no_plot:
        raise UsageError("--plot and --no-plot contradict each other: give one")
    plot = None if args.plot is None else (
        run_dir / report.PLOT_FILE if args.plot is IN_RUN_DIR else Path(args.plot))
    if plot is not None:
        check_plot(plot, run_dir)
        if (problem := report.plotting_problem()) is not None:
            raise UsageError(f"--plot: {plot} not written: {problem}")
    from tuner.space import SearchSpace  # here only to keep start-up fast (numpy)

    stored, config = report.read_run_config(run_dir)
    history = report.read_rows(run_dir / ckpt.HISTORY_FILE, report.HISTORY_COLUMNS, required=True)
    validation = report.read_rows(run_dir / ckpt.VALIDATION_FILE, report.VALIDATION_COLUMNS,
                                  required=False)
    machines = report.read_rows(run_dir / ckpt.CLUSTER_FILE, report.CLUSTER_COLUMNS,
                                required=False)
    best = report.read_best(run_dir, config, validated=bool(validation))
    found = read_status(run_dir)
    status = found[0] if found else None
    print(report.format_report(stored, history, validation, best, SearchSpace(config.params),
                               machines, status.idle_rate if status else None))
    if status is not None and status.state == RUNNING:  # a live run, or one that died
        print("\n" + "\n".join(status_lines(status, found[1], run_dir, time.time())[1]))
    if plot is not None:
        try:
            path = report.plot_convergence(plot, history, validation, stored)
        except OSError as err:  # a full disk: the file is as it was
            raise UnwritableTarget(f"{plot}: cannot write: {err.strerror}") from None
        else:
            print(f"wrote {path}")
    return 0


def check_plot(plot: Path, run_dir: Path) -> None:
    """Refuse, before anything is read, a plot file tune may not write (a device, a link, a
    committed file...: ``engine.atomic.check_target``), one of a run's own files, or a plot
    that would replace one of results without a checkpoint (a shipped run, committed or
    copied)."""
    new_plot = commands.tune("report", run_dir, "--plot", unused_path(report.PLOT_FILE))
    elsewhere = f"write the plot elsewhere: {new_plot}"
    check_target(plot, instead=elsewhere)
    if plot.name in RUN_FILES - {report.PLOT_FILE} and (plot.parent / ckpt.CONFIG_FILE).is_file():
        raise UnwritableTarget(f"{plot}: cannot write: it is one of a run's own files; give "
                               "the plot another name")
    if plot.exists() and holds(plot.parent) is Holds.RESULTS:
        raise UnwritableTarget(f"{plot}: cannot write: {plot.parent} holds results without a "
                               f"checkpoint (a shipped run), which are never rewritten; "
                               f"{elsewhere}")
