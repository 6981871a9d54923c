"""What ``tune run`` and ``tune resume`` share on the command line: their options as the plain
values a job takes (``tuner.api.launch.Launch``), and whether progress is shown. The job itself,
and every line it says, is the tuner's (``tuner.api.job``)."""

from __future__ import annotations

import argparse

from tuner.api.launch import Launch
from tuner.cli.options import CONFIG_OPTIONS


def launch(args: argparse.Namespace) -> Launch:
    """The job ``tune run`` or ``tune resume`` asks for, its options named as given."""
    return Launch(args.command, args.config, overwrite=getattr(args, "overwrite", False),
                  family_changed=getattr(args, "family_changed", False), workers=args.workers,
                  address=args.address,
                  names={option.key: option.flag for option in CONFIG_OPTIONS})


def show_progress(args: argparse.Namespace) -> bool:
    """Progress on stderr unless ``--quiet``: bars on a terminal, lines a minute apart off one
    (a log file, ``nohup``), so that a long generation is never silence there."""
    return not args.quiet
