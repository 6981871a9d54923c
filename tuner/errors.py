"""The tuner's error hierarchy. The CLI prints any of these as one line and exits with status 2."""


class ConfigError(ValueError):
    """A run config is invalid; the message names the file, the key path and what was expected."""


class CheckpointError(ValueError):
    """A run directory or checkpoint is missing, torn, foreign or from another format version."""


class EvaluationError(RuntimeError):
    """Games could not be played: workers died too often, or the engine raised in a game."""
