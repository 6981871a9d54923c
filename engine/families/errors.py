"""What can go wrong with a family: every error is a ``FamilyNotFound`` (a ``BadInput``).

Those raised by ``get_family`` and the family guard say which family; callers that know where
the spec was written (a config key, a weights file's field, an option) put that in front.
"""

from __future__ import annotations

from pathlib import Path

from engine.errors import BadInput


class FamilyNotFound(BadInput):
    """A family spec names nothing usable; the message says what is missing."""


class UntrustedFamily(FamilyNotFound):
    """A family named by a weights file whose code the user did not name too (a file or a
    module): reading a weights file alone never runs code."""


class UntrustedFamilyFile(UntrustedFamily):
    """A family file named by a weights file that the user did not name too (``--family-file``)."""

    def __init__(self, message: str, path: Path | None = None):
        super().__init__(message)
        self.path = path


class UntrustedFamilyModule(UntrustedFamily):
    """A ``module:Class`` family named by a weights file whose module the user did not name too
    (``--family-module``)."""

    def __init__(self, message: str, module: str = ""):
        super().__init__(message)
        self.module = module


class FamilyDefinitionError(FamilyNotFound):
    """A family's definition is unusable (its ``params`` are not a tuple of uniquely named
    ``Param``, say); the message names the family and the fault."""


class FamilyCodeError(FamilyNotFound):
    """A family's own code raised (an exception, ``SystemExit``, a ``KeyboardInterrupt`` that no
    Ctrl-C sent): the message names the family's file and line, what was called, and what it
    raised. ``file`` and ``line`` say the same (None and 0 where unknown)."""

    def __init__(self, message: str, file: str | None = None, line: int = 0):
        super().__init__(message)
        self.file = file
        self.line = line
