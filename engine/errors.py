"""The one error hierarchy of tune2048: every error a user can cause or meet, with its exit code.

``Tune2048Error`` is the base; the ``tune`` command prints any of them as one line and exits
with its ``exit_code``. ``BadInput`` (exit status 2) is input the user can fix: a config, a
weights file, a board, a run directory, a family, an argument; it is raised before anything is
computed or written. ``Failure`` (exit status 1) is a command that could not finish through no
fault of its input: workers died, a cluster could not be joined. Any other exception is a bug and
keeps its traceback.
"""

from __future__ import annotations


class Tune2048Error(Exception):
    """Base of every error tune2048 reports as one line."""

    exit_code = 1


class BadInput(Tune2048Error, ValueError):
    """Input the user can fix; the message names the file or option, the field and the fault."""

    exit_code = 2


class Failure(Tune2048Error, RuntimeError):
    """A command could not finish; the message says what failed and what to do."""

    exit_code = 1
