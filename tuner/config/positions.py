"""A run config's ``positions`` section: the position set a position fitness scores candidates
on (``evaluation.fitness``: ``regret``, ``agreement`` or ``outcome_fit``; docs/positions.md).

::

    positions:
      set: sets/classic-d1.npz     # a position set file (tune positions build), relative to
                                   # the config's directory

The set is read while the config is read: a missing, damaged or unfinished set is one line
naming ``positions.set``. The run's own ``config.yaml`` records the set's digest (``sha256``), so
that a run resumed on another set, or on the same file changed, is refused rather than mixed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.echo import echo
from engine.errors import BadInput
from tuner.checker import Checker, describe

NAME = "positions"
KEYS = ("set", "sha256")


@dataclass(frozen=True)
class PositionsSection:
    """The set as the config names it (``path`` absolute), its digest, and how many games and
    positions it holds."""

    path: str
    sha256: str
    games: int
    positions: int

    def to_config(self, base_dir: str | os.PathLike) -> dict[str, Any]:
        """The section as a config in ``base_dir`` writes it (``set`` relative to it)."""
        return {"set": os.path.relpath(self.path, os.path.abspath(base_dir)),
                "sha256": self.sha256}


def parse_positions(check: Checker, raw: Any,
                    base_dir: str | os.PathLike) -> PositionsSection | None:
    """The ``positions`` section, its set read and checked; None after reporting why not."""
    if not isinstance(raw, dict):
        check.problem(NAME, f"expected a mapping with a set, got {describe(raw)}")
        return None
    before = len(check.problems)
    check.unknown_keys(raw, KEYS, NAME)
    text = check.text(raw, "set", NAME, what="a position set file")
    recorded = check.text(raw, "sha256", NAME, default="", what="a digest")
    if text is None or len(check.problems) > before:
        return None
    path = Path(os.path.normpath(Path(base_dir, text).absolute()))
    # numpy: read only where a config names a set
    from engine.positions.set_file import read_positions

    try:
        found = read_positions(path)
    except BadInput as err:
        check.problem(f"{NAME}.set", str(err))
        return None
    if not found.complete:
        check.problem(f"{NAME}.set", f"{path}: holds {found.games:,} of its {found.planned:,} "
                                     "games: finish it with the tune positions build command "
                                     "that began it")
        return None
    if recorded and recorded != found.sha256:
        check.problem(f"{NAME}.set", f"{echo(text)} is not the set this run began with (its "
                                     f"digest is {found.sha256[:12]}..., the run's "
                                     f"{recorded[:12]}...): name that set")
        return None
    return PositionsSection(str(path), found.sha256, found.games, found.positions)
