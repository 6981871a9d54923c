"""Finding a family by its *spec*: a built-in name, a registered name, a module or a file.

A spec is one of:

- a built-in name (``classic``, ``snake``, ``features``, ``combined``, ``ranked``);
- a name registered by an installed package under the entry-point group ``tune2048.families``
  (``[project.entry-points."tune2048.families"] mine = "mypkg.families:Mine"``);
- ``package.module:ClassName``: a class importable from an installed module;
- ``path/to/file.py:ClassName``: a class in a Python file. A relative path is relative to the
  directory of the YAML file that names it (a config, a run's stored config, a weights file), or
  to the working directory on the command line.

The class is a subclass of ``engine.families.Family`` (an instance works too); its ``params``
are checked when it is found (``check_definition``). Everything the family's own code raises on
the way (importing it, creating it, reading its params) is one ``FamilyCodeError`` line naming
its file and line (``engine.families.guard``).

The trust rule. Importing a family runs its code, so files and modules are imported only where
the caller allows it: always for configs and the command line (a config is as trusted as the
code it names), but for a weights file only when the user names the same file or module too
(``--family-file``, ``--family-module``; ``allow_files`` and ``allow_modules`` here): a weights
file is data, and reading one must never run code, not even an installed module's (``this``,
``antigravity`` and ``venv.__main__`` act when imported). Built-in and registered families are
code the user installed as tune2048 families, so weights files may name them.

What a spec names without running code (its form, the built-in and registered names) is in
``engine.families.specs``.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import math
import numbers
import os
import sys
from collections.abc import Collection
from pathlib import Path
from types import ModuleType

from engine.echo import echo
from engine.families import specs
from engine.families.base import Family, Param
from engine.families.errors import (
    FamilyDefinitionError,
    FamilyNotFound,
    UntrustedFamilyFile,
    UntrustedFamilyModule,
)
from engine.families.guard import family_code, family_code_error, shown_path, shown_spec
from engine.families.specs import FAMILIES, file_spec_path, is_file_spec, registered


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
    allow_modules: bool | Collection[str] = True,
) -> Family:
    """The family a spec names.

    Args:
        spec: a name, ``module:Class`` or ``file.py:Class`` (see the module docstring).
        base_dir: what a relative file path is relative to (default: the working directory).
        allow_files: True to import any family file; otherwise only files in this collection
            (a weights file's family runs only if the user named the file too).
        allow_modules: True to import any module; otherwise only the modules named in this
            collection (exactly: ``mypkg.families`` for ``mypkg.families:Mine``).

    Raises:
        FamilyNotFound: the spec names nothing; the file or module is not allowed
            (``UntrustedFamilyFile``, ``UntrustedFamilyModule``, checked before anything is
            imported); the family's own code raised (``FamilyCodeError``); its definition is
            unusable (``FamilyDefinitionError``).
    """
    if not isinstance(spec, str) or not spec:
        raise FamilyNotFound(f"expected a family name or spec, got {echo(spec)}")
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
    elif ":" in spec:
        module_name, _, class_name = spec.rpartition(":")
        if not module_name or module_name.startswith(".") or not class_name:
            raise FamilyNotFound(f"family {spec!r}: expected module:Class (an installed module "
                                 "and a class in it) or file.py:Class")
        if allow_modules is not True and module_name not in (allow_modules or ()):
            raise UntrustedFamilyModule(
                f"family {spec!r} is code in module {module_name}, which runs only when you "
                f"name the module too", module_name)
    known = specs.found(canonical)
    if known is not None:
        return known
    if is_file_spec(spec):
        family = _from_module(_import_file(path, canonical), canonical)
    elif ":" in spec:
        family = _from_module(_import_module(spec.rpartition(":")[0], spec), spec)
    else:
        entry = registered().get(spec)
        if entry is None:
            raise FamilyNotFound(
                f"unknown family {spec!r} (built-in: {', '.join(FAMILIES)}; registered: "
                f"{', '.join(registered()) or 'none'}; or give module:Class or file.py:Class)")
        with family_code(spec, "loading it"):
            found = entry.load()
        family = _as_family(found, spec)
    specs.remember(canonical, family)
    return family


def check_definition(family: Family, spec: str | None = None) -> Family:
    """Refuse a family whose definition the engine cannot use: ``params`` that are not a tuple
    (or list) of ``Param`` with unique identifier names, numbers for default, low and high, and
    a finite default. Finite ranges, defaults inside them and docs are ``check_family``'s
    (``tune family check``). Returns the family.

    Raises:
        FamilyDefinitionError: one line naming the family and the fault.
        FamilyCodeError: reading ``params`` raised.
    """
    spec = spec or specs.spec_of(family) or (
        f"{type(family).__module__}:{type(family).__qualname__}")

    def fail(message: str) -> FamilyDefinitionError:
        return FamilyDefinitionError(f"family {shown_spec(spec)!r}: {message}")

    with family_code(spec, "reading its params"):
        params = family.params
    if not isinstance(params, (tuple, list)):
        raise fail(f"params must be a tuple of engine.families.Param, got "
                   f"{type(params).__name__} {echo(params)}")
    seen = set()
    for i, param in enumerate(params):
        if not isinstance(param, Param):
            raise fail(f"params[{i}] must be an engine.families.Param, got "
                       f"{type(param).__name__} {echo(param)}")
        if not isinstance(param.name, str) or not param.name.isidentifier():
            raise fail(f"params[{i}]: a parameter's name must be an identifier, got "
                       f"{echo(param.name)}")
        if param.name in seen:
            raise fail(f"parameter {param.name!r} is declared twice (params: "
                       f"{', '.join(p.name for p in params)})")
        seen.add(param.name)
        for field in ("default", "low", "high"):
            value = getattr(param, field)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or (
                    field == "default" and not math.isfinite(value)):
                raise fail(f"parameter {param.name!r}: {field} must be a "
                           f"{'finite ' if field == 'default' else ''}number, got {echo(value)}")
    return family


def family_source_digest(spec: str, base_dir: str | os.PathLike | None = None) -> str | None:
    """The sha256 (hex) of a family's source, to notice that it changed between two runs: a
    file family's file, a module family's source file; None for built-in and registered
    families (installed code, versioned with their package) and a module with no source file.

    Imports no family code (a module's parent packages may be imported to find it).

    Raises:
        FamilyNotFound: the file or module cannot be found or read.
    """
    if not isinstance(spec, str) or spec in FAMILIES or ":" not in spec:
        return None
    if is_file_spec(spec):
        path = file_spec_path(spec, base_dir)
    else:
        source = _module_source(spec.rpartition(":")[0], spec)
        if source is None:
            return None
        path = Path(source)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        raise FamilyNotFound(f"family {spec!r}: cannot read {path}: {err.strerror}") from None


def _module_source(module_name: str, spec: str) -> str | None:
    module = sys.modules.get(module_name)
    if module is not None:
        return getattr(module, "__file__", None)
    try:
        with family_code(spec, "finding it", passing=(ModuleNotFoundError, ValueError)):
            found = importlib.util.find_spec(module_name)
    except (ModuleNotFoundError, ValueError):
        found = None
    if found is None:
        raise FamilyNotFound(f"family {spec!r}: no module named {module_name!r} is installed")
    return found.origin if found.has_location else None


def _is_one_of(path: Path, allowed: Collection[str | os.PathLike]) -> bool:
    for other in allowed:
        try:
            if os.path.samefile(path, other):
                return True
        except OSError:
            continue
    return False


def _import_file(path: Path, spec: str) -> ModuleType:
    name = specs.file_module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise FamilyNotFound(f"family file {path} cannot be imported")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        with family_code(spec, "importing it"):
            module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _import_module(module_name: str, spec: str) -> ModuleType:
    try:
        with family_code(spec, "importing it", passing=(ModuleNotFoundError,)):
            return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and (module_name + ".").startswith(err.name + "."):  # it, or its package
            raise FamilyNotFound(
                f"family {spec!r}: no module named {err.name!r} is installed") from None
        raise family_code_error(spec, "importing it", err) from err  # an import inside it


def _from_module(module: ModuleType, spec: str) -> Family:
    class_name = spec.rpartition(":")[2]
    missing = object()
    with family_code(spec, f"looking up {class_name}"):
        found = getattr(module, class_name, missing)
    if found is missing:
        where = shown_path(module.__file__) if module.__file__ else module.__name__
        raise FamilyNotFound(f"family {shown_spec(spec)!r}: {class_name!r} is not defined in "
                             f"{where}")
    return _as_family(found, spec)


def _as_family(obj, spec: str) -> Family:
    if isinstance(obj, type) and issubclass(obj, Family):
        with family_code(spec, "creating it"):
            obj = obj()
    if not isinstance(obj, Family):
        raise FamilyNotFound(f"family {shown_spec(spec)!r}: {echo(obj)} is not a subclass of "
                             "engine.families.Family")
    return check_definition(obj, spec)
