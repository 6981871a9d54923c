"""Run configs: load a YAML file, check every key before any compute starts, fill in defaults.

The package's modules, by job: ``run_config`` (``RunConfig``, ``load_config``,
``parse_config``), ``sections`` (one dataclass per YAML section) and ``keys`` (how a section
declares its keys), ``params`` (the family and its parameters), ``engine`` (an external engine
in place of a family), ``cross_checks`` (checks between sections), ``limits`` (the bounds of
every value), ``removed`` (what an earlier version removed), ``document`` (a config's YAML text)
and ``diff`` (what differs between two configs). The names below are what the rest of tune2048
reads from a config; importing them loads no numpy.
"""

from tuner.config.diff import changed_keys, value_at
from tuner.config.document import read_document, stored_text
from tuner.config.limits import AUTO, MAX_GAMES_AT_ONCE, MAX_POPSIZE, MAX_WORKERS
from tuner.config.run_config import RunConfig, load_config, parse_config
from tuner.config.sections import (
    RESUMABLE_CHANGES,
    SECTIONS,
    START,
    CMAESSection,
    EvaluationSection,
    RaySection,
    RunSection,
    SearchSection,
    StrategySection,
    ValidationSection,
)

__all__ = [
    "AUTO", "MAX_GAMES_AT_ONCE", "MAX_POPSIZE", "MAX_WORKERS", "RESUMABLE_CHANGES", "SECTIONS",
    "START", "CMAESSection", "EvaluationSection", "RaySection", "RunConfig", "RunSection",
    "SearchSection", "StrategySection", "ValidationSection", "changed_keys", "load_config",
    "parse_config", "read_document", "stored_text", "value_at",
]
