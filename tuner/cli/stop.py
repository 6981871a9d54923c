"""``tune stop RUN_DIR``: ask a running job to stop once its current generation is checkpointed.

The request is a file in the run directory (``tuner.store.run_dir.request_stop``), so it works from any
machine that sees the directory; the job reads it between generations, exits with status 0 and
says how to resume.
"""

from __future__ import annotations

import argparse

from tuner import commands
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import request_stop
from tuner.store.status_file import read_status


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "stop", parents=[common], help="stop a running job after its current generation",
        description="Ask the tune process running RUN_DIR to stop once its current generation "
                    "is checkpointed; it exits with status 0 and says how to resume. Returns "
                    "at once.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run's directory, e.g. "
                                                          "outputs/snake-d1")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    if not args.run_dir:  # Path("") would be the working directory: `tune stop "$UNSET"`
        raise CheckpointError("RUN_DIR: expected the directory of a running run, got ''")
    run_dir = ckpt.run_directory(args.run_dir)
    _written, holder = request_stop(run_dir)
    who = f"tune process {holder}" if holder else "the tune process"
    print(f"{run_dir}: asked {who} to stop after its current generation; it checkpoints, exits "
          f"and prints the command that resumes it ({_resume_command(run_dir)})")
    return 0


def _resume_command(run_dir) -> str:
    """The command that resumes the run, with the options its job was given, as the job will
    print it (kept in its ``status.json``)."""
    try:
        found = read_status(run_dir)
    except CheckpointError:  # a damaged status file: the stop was asked for all the same
        found = None
    options = found[0].resume if found else None
    return commands.resume(run_dir, **(options or {}))
