"""A run config's ``engine`` section: an external engine tuned in place of a family.

::

    engine:
      command: [./c_engine]       # a list (program, arguments) or one string split as a shell
                                  # would; the program relative to cwd, or on PATH
      cwd: ../examples/engines    # where it runs, relative to the config's directory (default:
                                  # that directory); a run directory's config.yaml writes it
                                  # relative to the run directory
      ship: [c_engine]            # files or folders under cwd sent to Ray's nodes with the job
                                  # (default: none; nodes then need cwd at the same path)
      game_timeout: 60            # seconds one game may take before the engine counts as hung
      games_per_process: 0        # games before the engine is started afresh (0: never)

The engine is started once while the config is read: its declaration is what the config's
``params`` and ``search.depth`` are checked against, before anything else starts. Naming an
engine runs it: a config is as trusted as the command it names.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.echo import echo, shorten
from engine.errors import BadInput
from engine.external.player import (
    DEFAULT_GAME_TIMEOUT,
    EngineCommand,
    EngineFailure,
    declaration,
)
from engine.external.protocol import Declaration
from tuner.checker import Checker, describe
from tuner.config.limits import MAX_TIMEOUT

NAME = "engine"
KEYS = ("command", "cwd", "ship", "game_timeout", "games_per_process")
MAX_GAMES_PER_PROCESS = 1_000_000
MAX_WORDS = 256  # of a command line


@dataclass(frozen=True)
class EngineSection:
    """The engine as the config says it: how it is started, what it ships to Ray's nodes
    (paths relative to ``cwd``), and what it declared when the config was read."""

    engine: EngineCommand
    ship: tuple[str, ...]
    declared: Declaration

    def to_config(self, base_dir: str | os.PathLike) -> dict[str, Any]:
        """The section as a config in ``base_dir`` writes it (``cwd`` relative to it)."""
        return {"command": list(self.engine.command),
                "cwd": os.path.relpath(self.engine.cwd, os.path.abspath(base_dir)),
                "ship": list(self.ship), "game_timeout": self.engine.game_timeout,
                "games_per_process": self.engine.games_per_process}


def parse_engine(check: Checker, raw: Any, base_dir: str | os.PathLike) -> EngineSection | None:
    """The ``engine`` section, its engine started and greeted; None after reporting why not."""
    if not isinstance(raw, dict):
        check.problem(NAME, f"expected a mapping with a command, got {describe(raw)}")
        return None
    before = len(check.problems)
    check.unknown_keys(raw, KEYS, NAME)
    command = _command(check, raw.get("command"))
    cwd_text = check.text(raw, "cwd", NAME, default=".", what="a directory path")
    # normalised first: a stored config's cwd climbs out of a run directory not yet made
    cwd = Path(os.path.normpath(Path(base_dir, cwd_text or ".").absolute()))
    if cwd_text is not None and not cwd.is_dir():
        check.problem(f"{NAME}.cwd", f"{shorten(str(cwd), 200)} is not a directory")
    ship = _ship(check, raw.get("ship", []), cwd) if cwd.is_dir() else ()
    timeout = check.number(raw, "game_timeout", NAME, default=DEFAULT_GAME_TIMEOUT, low=0.0,
                           high=MAX_TIMEOUT, open_low=True)
    per_process = check.integer(raw, "games_per_process", NAME, default=0, low=0,
                                high=MAX_GAMES_PER_PROCESS)
    if len(check.problems) > before or command is None:
        return None
    engine = EngineCommand(command, str(cwd), timeout, per_process)
    try:
        declared = declaration(engine)
    except (BadInput, EngineFailure) as err:  # each names the engine and what it did
        check.problem(f"{NAME}.command", str(err))
        return None
    return EngineSection(engine, ship, declared)


def _command(check: Checker, value: Any) -> tuple[str, ...] | None:
    where = f"{NAME}.command"
    if isinstance(value, str):
        try:
            value = shlex.split(value)
        except ValueError as err:
            check.problem(where, f"cannot split {echo(value)} into words: {err}")
            return None
    if not isinstance(value, list) or not value or len(value) > MAX_WORDS or not all(
            isinstance(word, str) and word and "\0" not in word for word in value):
        check.problem(where, f"expected the engine's command line, a list of at most "
                             f"{MAX_WORDS} words or one string, got {describe(value)}")
        return None
    return tuple(value)


def _ship(check: Checker, value: Any, cwd: Path) -> tuple[str, ...]:
    """``ship``: paths of files or folders under ``cwd``, each relative to it."""
    where = f"{NAME}.ship"
    if not isinstance(value, list) or not all(isinstance(path, str) and path for path in value):
        check.problem(where, f"expected a list of paths relative to cwd, got {describe(value)}")
        return ()
    for path in value:
        full = Path(cwd, path)
        if Path(path).is_absolute() or ".." in Path(path).parts:
            check.problem(where, f"{echo(path)} is not a path under cwd: name files or folders "
                                 "inside it")
        elif not full.exists():
            check.problem(where, f"{echo(path)}: no such file or folder in {shorten(str(cwd))}")
    return tuple(value)
