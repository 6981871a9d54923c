"""Finding a family by its *spec*: a built-in name, a registered name, a module or a file.

A spec is one of:

- a built-in name (``classic``, ``snake``, ``features``, ``combined``, ``ranked``);
- a name registered by an installed package under the entry-point group ``tune2048.families``
  (``[project.entry-points."tune2048.families"] mine = "mypkg.families:Mine"``);
- ``package.module:ClassName``: a class importable from an installed module;
- ``path/to/file.py:ClassName``: a class in a Python file. A relative path is relative to the
  directory of the YAML file that names it (a config, a run's stored config, a weights file), or
  to the working directory on the command line.

The class is a subclass of ``engine.families.Family`` (an instance works too). Importing a family
runs its code, so files are imported only where the caller allows it: always for configs and the
command line (a config is as trusted as the code it names), but for a weights file only when the
user names the same file too (``--family-file``): a weights file is data, and reading one must
not run code from a path written inside it. Installed and registered families are code the user
installed, so weights files may name them.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
from collections.abc import Collection
from pathlib import Path
from types import ModuleType

from engine.errors import BadInput
from engine.families.base import Family
from engine.families.classic import CLASSIC
from engine.families.combined import COMBINED
from engine.families.features import FEATURES
from engine.families.ranked import RANKED
from engine.families.snake import SNAKE

ENTRY_POINT_GROUP = "tune2048.families"
FAMILIES: dict[str, Family] = {f.name: f for f in (CLASSIC, SNAKE, FEATURES, COMBINED, RANKED)}

_loaded: dict[str, Family] = {}  # canonical spec -> family, so each spec is imported once


class FamilyNotFound(BadInput):
    """A family spec names nothing usable; the message says what is missing."""


class UntrustedFamilyFile(FamilyNotFound):
    """A family file named by a weights file that the user did not name too."""

    def __init__(self, message: str, path: Path):
        super().__init__(message)
        self.path = path


def is_file_spec(spec: str) -> bool:
    """Whether ``spec`` names a class in a file (``path.py:ClassName``)."""
    path, sep, _ = spec.rpartition(":")
    return bool(sep) and path.endswith(".py")


def file_spec_path(spec: str, base_dir: str | os.PathLike | None = None) -> Path:
    """The absolute path of a file spec's file (relative paths against ``base_dir``)."""
    path = Path(spec.rpartition(":")[0]).expanduser()
    return Path(os.path.abspath(Path(base_dir or ".") / path))


def canonical_spec(spec: str, base_dir: str | os.PathLike | None = None) -> str:
    """``spec`` with a file spec's path made absolute; other specs unchanged."""
    if not is_file_spec(spec):
        return spec
    return f"{file_spec_path(spec, base_dir)}:{spec.rpartition(':')[2]}"


def relative_spec(spec: str, directory: str | os.PathLike) -> str:
    """A canonical spec as it should be written in a YAML file that lives in ``directory``."""
    if not is_file_spec(spec):
        return spec
    relative = Path(os.path.relpath(file_spec_path(spec), os.path.abspath(directory)))
    return f"{relative.as_posix()}:{spec.rpartition(':')[2]}"


def registered() -> dict[str, importlib.metadata.EntryPoint]:
    """Families that installed packages register under ``tune2048.families``, by name."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def family_names() -> list[str]:
    """Every family name, built-in then registered, without importing any registered code."""
    return list(FAMILIES) + sorted(name for name in registered() if name not in FAMILIES)


def origin(name: str) -> str:
    """Where a named family comes from: ``built-in`` or ``registered by DISTRIBUTION``."""
    if name in FAMILIES:
        return "built-in"
    entry = registered().get(name)
    return f"registered by {entry.dist.name}" if entry and entry.dist else "registered"


def get_family(
    spec: str,
    base_dir: str | os.PathLike | None = None,
    allow_files: bool | Collection[str | os.PathLike] = True,
) -> Family:
    """The family a spec names.

    Args:
        spec: a name, ``module:Class`` or ``file.py:Class`` (see the module docstring).
        base_dir: what a relative file path is relative to (default: the working directory).
        allow_files: True to import any family file; otherwise only files in this collection
            (a weights file's family runs only if the user named the file too).

    Raises:
        FamilyNotFound: the spec names nothing, or the file is not allowed (UntrustedFamilyFile).
    """
    if not isinstance(spec, str) or not spec:
        raise FamilyNotFound(f"expected a family name or spec, got {spec!r}")
    if spec in FAMILIES:
        return FAMILIES[spec]
    canonical = canonical_spec(spec, base_dir)
    if is_file_spec(spec):
        path = file_spec_path(spec, base_dir)
        if not path.is_file():
            raise FamilyNotFound(f"family file {path} not found")
        if allow_files is not True and not _is_one_of(path, allow_files or ()):
            raise UntrustedFamilyFile(
                f"family {spec!r} is code in a file, which runs only when you name the file "
                f"too", path)
    if canonical in _loaded:
        return _loaded[canonical]
    if is_file_spec(spec):
        family = _from_module(_import_file(path), spec)
    elif ":" in spec:
        module_name = spec.rpartition(":")[0]
        family = _from_module(_import_module(module_name, spec), spec)
    else:
        entry = registered().get(spec)
        if entry is None:
            raise FamilyNotFound(
                f"unknown family {spec!r} (built-in: {', '.join(FAMILIES)}; registered: "
                f"{', '.join(registered()) or 'none'}; or give module:Class or file.py:Class)")
        family = _as_family(_load_entry(entry), spec)
    _loaded[canonical] = family
    return family


def module_to_ship(spec: str) -> str | ModuleType | None:
    """What Ray must ship to workers so that they can import a family: a file's path, a module's
    top-level package, or None for the built-ins (installed with tune2048 on every node)."""
    if spec in FAMILIES:
        return None
    if is_file_spec(spec):
        return str(file_spec_path(spec))
    if ":" not in spec:
        entry = registered().get(spec)
        if entry is None:
            return None
        spec = entry.value
    top = spec.rpartition(":")[0].partition(".")[0]
    return sys.modules.get(top) or importlib.import_module(top)


def worker_spec(spec: str) -> str:
    """The spec a Ray worker resolves: a shipped file is importable there as a module."""
    if is_file_spec(spec):
        return f"{file_spec_path(spec).stem}:{spec.rpartition(':')[2]}"
    return spec


def _is_one_of(path: Path, allowed: Collection[str | os.PathLike]) -> bool:
    for other in allowed:
        try:
            if os.path.samefile(path, other):
                return True
        except OSError:
            continue
    return False


def _import_file(path: Path) -> ModuleType:
    # one module per file path, under a name no other import uses
    name = "tune2048_family_" + hashlib.sha256(str(path).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise FamilyNotFound(f"family file {path} cannot be imported")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except Exception as err:  # the user's code may raise anything
        del sys.modules[name]
        raise FamilyNotFound(f"importing family file {path} failed: {_describe(err)}") from err
    return module


def _import_module(module_name: str, spec: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        missing = f"no module named {err.name!r} is installed"
        raise FamilyNotFound(f"family {spec!r}: {missing}") from None
    except Exception as err:  # the user's code may raise anything
        raise FamilyNotFound(f"family {spec!r}: importing {module_name} failed: "
                             f"{_describe(err)}") from err


def _load_entry(entry: importlib.metadata.EntryPoint):
    try:
        return entry.load()
    except Exception as err:  # the user's code may raise anything
        raise FamilyNotFound(f"family {entry.name!r} (registered as {entry.value}): loading it "
                             f"failed: {_describe(err)}") from err


def _from_module(module: ModuleType, spec: str) -> Family:
    class_name = spec.rpartition(":")[2]
    if not hasattr(module, class_name):
        raise FamilyNotFound(f"family {spec!r}: {class_name!r} is not defined in "
                             f"{getattr(module, '__file__', None) or module.__name__}")
    return _as_family(getattr(module, class_name), spec)


def _as_family(obj, spec: str) -> Family:
    if isinstance(obj, type) and issubclass(obj, Family):
        try:
            obj = obj()
        except Exception as err:  # the user's code may raise anything
            message = f"family {spec!r}: creating it failed: {_describe(err)}"
            raise FamilyNotFound(message) from err
    if not isinstance(obj, Family):
        raise FamilyNotFound(f"family {spec!r}: {obj!r} is not a subclass of "
                             "engine.families.Family")
    return obj


def _describe(err: BaseException) -> str:
    where = ""
    if isinstance(err, SyntaxError) and err.lineno:
        where = f" (line {err.lineno})"
    return f"{type(err).__name__}: {err}{where}"[:300]
