"""The command lines that messages tell a user to run: each one works when pasted into a shell
(a path with spaces or shell characters is quoted) and carries what the user gave."""

from __future__ import annotations

import os
import shlex


def tune(*words: str | os.PathLike | int) -> str:
    """``tune WORDS...`` as a shell reads it back: every word quoted where it needs it."""
    return shlex.join(["tune", *map(str, words)])


def resume(run_dir: str | os.PathLike, *, config: str | None = None,
           family_changed: bool = False, workers: int | None = None,
           address: str | None = None) -> str:
    """``tune resume RUN_DIR`` with the options that change where or how a run goes on: every
    resume command a message prints is built here, from the options the job was given
    (``tuner.api.launch.Launch.resume_options``), which its ``status.json`` keeps for ``tune
    status`` and ``tune stop``."""
    words: list = ["resume", run_dir]
    words += ["--config", config] if config else []
    words += ["--family-changed"] if family_changed else []
    words += ["--workers", workers] if workers is not None else []
    words += ["--address", address] if address is not None else []
    return tune(*words)
