"""Calling a family's own code: whatever it raises becomes one ``FamilyCodeError`` line.

A family brings code that runs where tune2048 calls it: when its file or module is imported, when
it is created and its ``params`` read, in ``heuristic(weights)`` (table building) and in
``reference()``. Every such call goes through ``family_code``::

    with family_code(family, "heuristic()"):
        heuristic = family.heuristic(weights)

and an exception, a ``SystemExit`` (which ``except Exception`` lets through) or a
``KeyboardInterrupt`` that no Ctrl-C sent becomes ``FamilyCodeError``, a bad input whose message
names the family's file and the line where it raised, what was called, and what it raised::

    fam.py:12: in family 'fam.py:Bad': heuristic() raised ZeroDivisionError: division by zero

``family_code_error`` builds the same error for code that catches the exception itself (a worker
process, say).
"""

from __future__ import annotations

import os
import signal
import sys
import sysconfig
from pathlib import Path
from typing import Self

from engine.echo import shorten
from engine.errors import Tune2048Error
from engine.families import specs
from engine.families.errors import FamilyCodeError

# A copy of a family file made for other machines (``tuner.cluster.shipping``) is a module in a package
# named SHIPPED_PREFIX + a digest, whose SOURCE_ATTRIBUTE holds the original's path: messages
# there show that path.
SHIPPED_PREFIX = "tune2048_shipped_"
SOURCE_ATTRIBUTE = "__tune2048_source__"
MAX_MESSAGE = 200  # characters of what the family's exception says

_TUNE2048 = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                 package, "")
    for package in ("engine", "tuner", "cli")
)
_PYTHON = tuple({os.path.join(sysconfig.get_paths()[key], "")
                 for key in ("stdlib", "platstdlib", "purelib", "platlib")})


class family_code:
    """Guard a call into a family's own code (see the module docstring).

    Args:
        family: the ``Family``, or its spec where there is no family yet (importing it).
        action: what is called, as the message says it: ``"heuristic()"``, ``"importing it"``.
        passing: exception types to let through unchanged, for a caller that reports them
            itself (``ArithmeticError`` where overflowing weights are to blame, say).

    Errors of tune2048's own (``Tune2048Error``: a ``HeuristicError``, a family that names
    another that is not found) pass unchanged: they are one line already.

    ``KeyboardInterrupt``: a real Ctrl-C must stay an interrupt. Python's own SIGINT handler
    (``signal.default_int_handler``) raises a plain ``KeyboardInterrupt``; ``tune`` installs its
    own handlers, which raise a subclass of it. So a ``KeyboardInterrupt`` is the family's doing,
    and converted, only when its type is exactly ``KeyboardInterrupt`` and the SIGINT handler in
    place is not ``signal.default_int_handler`` (someone installed their own, so a plain one did
    not come from the signal); any other is raised again as it is.
    """

    __slots__ = ("action", "family", "passing")

    def __init__(self, family, action: str, passing: tuple[type[BaseException], ...] = ()):
        self.family = family
        self.action = action
        self.passing = passing

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind, err, traceback) -> bool:
        if err is None or isinstance(err, (Tune2048Error, *self.passing)) or is_interrupt(err):
            return False
        raise family_code_error(self.family, self.action, err) from err


def is_interrupt(err: BaseException) -> bool:
    """Whether ``err`` is an interrupt to pass on, not the family's doing (see ``family_code``)."""
    if not isinstance(err, KeyboardInterrupt):
        return False
    return type(err) is not KeyboardInterrupt or (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler)


def family_code_error(family, action: str, err: BaseException) -> FamilyCodeError:
    """The one-line error for ``err``, raised by ``family``'s code while doing ``action``."""
    spec, module, file = _origin(family)
    where_file, line = _where(err, module, file)
    text = " ".join(str(err).split())
    raised = f"{type(err).__name__}: {shorten(text, MAX_MESSAGE)}" if text else type(err).__name__
    place = f"{where_file}:{line}: " if where_file and line else (
        f"{where_file}: " if where_file else "")
    message = f"{place}in family {spec!r}: {action} raised {raised}"
    return FamilyCodeError(message, where_file, line)


def shown_path(path: str | os.PathLike) -> str:
    """A path as a user would type it here: relative to the working directory if below it."""
    try:
        return str(Path(os.path.abspath(path)).relative_to(os.getcwd()))
    except (ValueError, OSError):  # not below it, or no working directory
        return str(path)


def _origin(family) -> tuple[str, str | None, str | None]:
    """(the spec as messages show it, the family's module name, its file) for a family or spec."""
    if not isinstance(family, str):
        cls = type(family)
        module = cls.__module__
        file = getattr(sys.modules.get(module), "__file__", None)
        spec = specs.spec_of(family) or f"{module}:{cls.__qualname__}"
        return shown_spec(spec), module, file
    spec = family
    if specs.is_file_spec(spec):
        path = specs.file_spec_path(spec)
        return shown_spec(spec), specs.file_module_name(path), str(path)
    if ":" in spec:
        module = spec.rpartition(":")[0]
    else:
        entry = specs.registered().get(spec)
        module = entry.value.partition(":")[0] if entry is not None else None
    file = getattr(sys.modules.get(module or ""), "__file__", None)
    return shown_spec(spec), module, file


def shown_spec(spec: str) -> str:
    """A spec as messages show it: a file's path as the user would type it, and a shipped copy
    of a family file by the original's path."""
    name = spec.rpartition(":")[2]
    if specs.is_file_spec(spec):
        return f"{shown_path(specs.file_spec_path(spec))}:{name}"
    source = _shipped_source(spec.rpartition(":")[0])
    return f"{source}:{name}" if source else spec


def _shipped_source(module: str | None) -> str | None:
    """The original path of a family file whose shipped copy was imported as ``module``, else
    None."""
    if not module or not module.startswith(SHIPPED_PREFIX):
        return None
    source = getattr(sys.modules.get(module.partition(".")[0]), SOURCE_ATTRIBUTE, None)
    return source if isinstance(source, str) else None


def _where(err: BaseException, module: str | None, file: str | None) -> tuple[str | None, int]:
    """The file and line, as messages show them, where the family's code raised ``err``: the
    innermost frame in the family's module (or file), else the innermost outside tune2048 and
    Python's own files; a syntax error where it is. The family's file and 0 if none is."""
    if isinstance(err, SyntaxError) and err.filename and err.lineno:
        return shown_path(err.filename), err.lineno
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame.f_globals.get("__name__"), tb.tb_frame.f_code.co_filename,
                       tb.tb_lineno))
        tb = tb.tb_next
    same = file and os.path.normcase(os.path.abspath(file))
    for name, filename, line in reversed(frames):
        if (module and name == module) or (same and os.path.normcase(filename) == same):
            return _shown_frame_file(name, filename), line
    for name, filename, line in reversed(frames):
        if not filename.startswith(("<", *_TUNE2048, *_PYTHON)):
            return _shown_frame_file(name, filename), line
    if file:
        return _shown_frame_file(module, file), 0
    return None, 0


def _shown_frame_file(module: str | None, filename: str) -> str:
    return _shipped_source(module) or shown_path(filename)
