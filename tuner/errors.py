"""The tuner's errors, in the one hierarchy of ``engine.errors``."""

from engine.errors import BadInput, Failure


class ConfigError(BadInput):
    """A run config is invalid; the message names the file, the key path and what was expected."""


class CheckpointError(BadInput):
    """A run directory or checkpoint is missing, torn, foreign or from another format version."""


class EvaluationError(Failure):
    """Games could not be played: workers died too often, or the engine raised in a game."""
