"""The command lines that messages tell a user to run: each one works when pasted into a shell
(a path with spaces or shell characters is quoted) and carries what the user gave."""

from __future__ import annotations

import os
import shlex


def tune(*words: str | os.PathLike | int) -> str:
    """``tune WORDS...`` as a shell reads it back: every word quoted where it needs it."""
    return shlex.join(["tune", *map(str, words)])
