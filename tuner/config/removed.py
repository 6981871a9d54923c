"""Config keys and values that a version of tune2048 removed, each with why and what to use
instead.

A config, or a run directory's ``config.yaml``, that names one is refused before anything else in
it is read, in one line: ``FILE: positions: removed in tune2048 0.4.0 (WHY): INSTEAD``. Without
this table it would be an unknown key or an unknown value, which says neither that it once worked
nor what replaced it.

``REMOVED`` is the table, one ``Removed`` a line, the version first that removed it:

- ``Removed("positions", "0.4.0", WHY, "remove the section")``: a section, or a key
  (``section.key``), refused whatever its value;
- ``values=("regret",)``: only these values of a key that stays;
- ``harmless=(0,)``: values of a removed key that meant what every run does now (its old
  default, which every run directory of the versions before holds): read as if the key were
  absent, so that those run directories still resume.

Entries of one change share their ``why``, and a config that names several of them is told once,
by the first found in the table's order: put first the entry whose ``instead`` says the whole
change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tuner.errors import ConfigError


@dataclass(frozen=True)
class Removed:
    """A removed key (``key``: its path), or values of a key (``values``), and since when."""

    key: str
    version: str
    why: str
    instead: str
    values: tuple = ()
    harmless: tuple = ()

    def refusal(self, value: Any) -> str:
        """The line's text after ``FILE: KEY: ``."""
        subject = f"{value} was removed" if self.values else "removed"
        return f"{subject} in tune2048 {self.version} ({self.why}): {self.instead}"


POSITION_SETS = ("position sets did not rank candidates better than games of their cost; see "
                 "CHANGELOG.md")

REMOVED = (
    Removed("positions", "0.4.0", POSITION_SETS,
            "remove the section, and set evaluation.fitness to mean_score"),
    Removed("evaluation.fitness", "0.4.0", POSITION_SETS, "set it to mean_score",
            values=("regret", "agreement", "outcome_fit")),
    Removed("strategy.name", "0.4.0", "measured, it cost more than 64 fixed games a candidate "
            "to reach the same validated score; see CHANGELOG.md",
            "remove the strategy section: every candidate then plays evaluation.games games",
            values=("uh-cma-es", "lra-cma-es")),
    Removed("evaluation.reevaluate_best", "0.4.0", "no measured run played its best again; "
            "see CHANGELOG.md", "remove it; to play each candidate more, raise evaluation.games",
            harmless=(0,)),
    Removed("evaluation.fitness", "0.4.0", "no shipped config or measured run scored by it; see "
            "CHANGELOG.md", "set it to score_quantile (a low quantile of the score, for "
            "consistency) or mean_score", values=("mean_log2_max_tile",)),
)


def refuse_removed(document: dict, source: str) -> dict:
    """``document`` less the removed keys it gives at a harmless value; ``ConfigError``, one
    line for each reason, where it names anything else of ``REMOVED`` (``source``: the file)."""
    lines, told = [], set()
    for entry in REMOVED:
        found, value = _lookup(document, entry.key)
        if not found or (entry.values and value not in entry.values):
            continue
        if not entry.values and value in entry.harmless:
            document = _without(document, entry.key)
        elif entry.why not in told:
            told.add(entry.why)
            lines.append(f"{source}: {entry.key}: {entry.refusal(value)}")
    if lines:
        raise ConfigError("\n".join(lines))
    return document


def harmless(key: str, value: Any) -> bool:
    """Whether the key path at ``value`` is a removed key at a harmless value: a run directory
    of the versions before that holds it is the same run as one without it."""
    return any(entry.key == key and not entry.values and value in entry.harmless
               for entry in REMOVED)


def _lookup(document: dict, key: str) -> tuple[bool, Any]:
    """Whether the key path is in ``document``, and its value."""
    value: Any = document
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _without(document: dict, key: str) -> dict:
    """A copy of ``document`` without the key path (the mappings on its way copied too)."""
    head, _, rest = key.partition(".")
    copy = dict(document)
    if rest:
        copy[head] = _without(copy[head], rest)
    else:
        del copy[head]
    return copy
