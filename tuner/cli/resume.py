"""``tune resume RUN_DIR`` (short form: ``tune --resume RUN_DIR``): continue a stopped run from
its last checkpoint, exactly as it would have gone on.

``--config FILE`` gives a config whose stop conditions or Ray settings changed (a raised
``cmaes.max_generations``, say); any other change is refused with the changed keys named.
"""

from __future__ import annotations

import argparse

from tuner.api.job import FINISHED
from tuner.api.resumed import resume_run
from tuner.cli import job
from tuner.cli.options import ray_options


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "resume", parents=[common, ray_options()], help="continue a stopped run",
        description="Continue a stopped run from its last checkpoint.")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="the run's directory")
    parser.add_argument("--config", metavar="FILE",
                        help="the run's config with changed stop conditions or Ray settings")
    parser.add_argument("--family-changed", action="store_true",
                        help="resume although the run's family file or module was edited since "
                             "the run started (its next games use the new code)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    outcome = resume_run(args.run_dir, job.launch(args), progress=job.show_progress(args))
    if outcome.status == FINISHED:
        print(outcome.message)
    return outcome.exit_code
