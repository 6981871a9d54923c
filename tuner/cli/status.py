"""``tune status RUN_DIR``: whether the run there is alive, and where it stands, from any shell
on a machine that sees the directory (``tuner.analysis.liveness``). Reads ``status.json``; writes
nothing.

Exit status: 0 running; 3 ended (done, stopped, interrupted or failed, as the job said); 4 dead
(its process is gone without a final word) or not heard from for too long; 2 bad input (no such
directory, not a run directory, a damaged status file).
"""

from __future__ import annotations

import argparse
import time

from tuner import commands
from tuner.analysis.liveness import status_lines
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.store.status_file import read_status


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "status", parents=[common], help="say whether a run is alive and where it stands",
        description="Say whether the run in RUN_DIR is running, ended (done, stopped, "
                    "interrupted, failed) or dead, with its generation, games, best so far, "
                    "CPUs, ETA, last event, a stop asked for and the command that resumes it. "
                    "Works from any machine that sees RUN_DIR; "
                    "writes nothing. Exit status: 0 running, 3 ended, 4 dead or not heard "
                    "from, 2 bad input.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory, e.g. outputs/quick")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if not args.run_dir:  # Path("") would be the working directory
        raise CheckpointError("RUN_DIR: expected a run directory, got ''")
    run_dir = ckpt.run_directory(args.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise CheckpointError(f"{run_dir}: is not a directory: expected a run directory")
    found = read_status(run_dir)
    if found is None:
        if not run_dir.is_dir():
            raise CheckpointError(f"{run_dir}: no such run directory")
        if not (run_dir / ckpt.CONFIG_FILE).is_file():
            raise CheckpointError(f"{run_dir}: not a run directory (no {ckpt.CONFIG_FILE})")
        raise CheckpointError(f"{run_dir}: no {ckpt.STATUS_FILE}: a shipped result, or a run "
                              "from before tune status (its report: "
                              f"{commands.tune('report', run_dir)})")
    status, path = found
    verdict, lines = status_lines(status, path, run_dir, time.time())
    print("\n".join(lines))
    return verdict.exit_code
