"""The tuner's errors, in the one hierarchy of ``engine.errors``."""

import errno

from engine.errors import BadInput, Failure

# An OSError the machine, not tune, is to blame for: said in one line (exit status 1) where it is
# met, e.g. a disk that fills while a run starts; any other stays a bug with its traceback.
ENVIRONMENT_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS,
                                errno.EACCES, errno.EPERM, errno.EIO})


class ConfigError(BadInput):
    """A run config is invalid; the message names the file, the key path and what was expected."""


class CheckpointError(BadInput):
    """A run directory or checkpoint is missing, torn, foreign or from another format version."""


class EvaluationError(Failure):
    """Games could not be played: workers died too often, or the engine raised in a game."""
