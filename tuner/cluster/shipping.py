"""What Ray must ship to its workers so that they can import a family, and the spec it goes by
there: the engine finds families on one machine, and Ray's ``runtime_env`` (``py_modules``)
brings their code to the others; an external engine's files travel the same way.

A family file travels in a package of its own, named after the file's path and content, so that
two files of one name (``a/fam.py``, ``b/fam.py``) never collide on a worker and an edited file is
a new package; in it, the copy is always the module ``family``, so that the file's own name
(``json.py``, ``my-family.py``, ``__init__.py``) is never a module name, on a worker as on the
driver (``engine.families.specs.file_module_name``). The package records the file's path here,
which the family guard's messages on a worker show (``engine.families.guard``).
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import importlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType

from engine.errors import BadInput
from engine.external.player import EngineCommand
from engine.families import FAMILIES, FamilyNotFound
from engine.families.guard import SHIPPED_PREFIX, SOURCE_ATTRIBUTE
from engine.families.specs import file_spec_path, is_file_spec, registered

SHIPPED_MODULE = "family"  # a family file's copy in its package, whatever the file's own name
ENGINE_PREFIX = "tune2048_engine_"  # a package of an external engine's shipped files


def ship_family(spec: str) -> tuple[str | ModuleType | None, str]:
    """What to put in ``py_modules`` for a family, and its spec on the workers: (None, spec) for
    a built-in (installed with tune2048 on every node); for a module or registered family, the
    module's top-level package and the same spec; for a file, the folder of a package holding a
    copy of it, and ``PACKAGE.family:Class``.

    Raises:
        FamilyNotFound: the family file cannot be read.
    """
    if spec in FAMILIES:
        return None, spec
    if is_file_spec(spec):
        path = file_spec_path(spec)
        try:
            content = path.read_bytes()
        except OSError as err:
            raise FamilyNotFound(f"family file {path}: cannot read it: {err.strerror}") from None
        package = SHIPPED_PREFIX + hashlib.sha256(
            os.fsencode(path) + b"\0" + content).hexdigest()[:16]
        def fill(building: Path) -> None:
            (building / "__init__.py").write_text(
                '"""A family file shipped by tune2048 to its Ray workers."""\n\n'
                f"{SOURCE_ATTRIBUTE} = {str(path)!r}\n", encoding="utf-8")
            (building / f"{SHIPPED_MODULE}.py").write_bytes(content)

        folder = _package(package, fill)
        return str(folder), f"{package}.{SHIPPED_MODULE}:{spec.rpartition(':')[2]}"
    module_spec = spec if ":" in spec else None
    if module_spec is None:
        entry = registered().get(spec)
        if entry is None:
            return None, spec
        module_spec = entry.value
    top = module_spec.rpartition(":")[0].partition(".")[0]
    return sys.modules.get(top) or importlib.import_module(top), spec


def ship_engine(engine: EngineCommand, ship: Sequence[str]) -> tuple[str, EngineCommand]:
    """The folder of a package holding copies of ``ship`` (paths under the engine's ``cwd``,
    kept at the same relative paths, file modes too), and the engine as workers start it: in
    that package's folder, wherever Ray unpacked it. The package is named after the files'
    paths and contents, so an edited or rebuilt engine is a new package."""
    cwd = Path(engine.cwd)
    files = sorted({file for path in ship for file in _files_under(cwd / path)})
    digest = hashlib.sha256(os.fsencode(cwd))
    for file in files:
        try:
            content = file.read_bytes()
        except OSError as err:
            raise BadInput(f"engine {engine.label!r}: cannot ship {file}: {err.strerror}") from None
        digest.update(b"\0" + os.fsencode(file.relative_to(cwd)) + b"\0" + content)
    package = ENGINE_PREFIX + digest.hexdigest()[:16]

    def fill(building: Path) -> None:
        (building / "__init__.py").write_text(
            '"""An external engine\'s files, shipped by tune2048 to its Ray workers."""\n',
            encoding="utf-8")
        for file in files:
            copy = building / file.relative_to(cwd)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(file, copy)

    return str(_package(package, fill)), dataclasses.replace(engine, package=package)


def _package(package: str, fill: Callable[[Path], None]) -> Path:
    """The folder of ``package`` among those this process ships, made once by ``fill`` in a
    folder of its own and renamed whole (a half-made one is never shipped)."""
    folder = _shipping_dir() / package
    if not folder.is_dir():
        building = _shipping_dir() / f"{package}.building"
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir()
        fill(building)
        building.rename(folder)
    return folder


def _files_under(path: Path) -> list[Path]:
    if path.is_dir():
        return [file for file in path.rglob("*") if file.is_file()
                and not any(part in ("__pycache__", ".git") for part in file.parts)]
    return [path]


def empty_working_dir() -> Path:
    """An empty folder, Ray's ``working_dir`` for its workers: without one, Ray puts the
    driver's working directory first on every worker's import path, and a file there named like
    a module (``engine.py``, ``numpy.py``, a family's ``json.py``) would be imported on the
    workers in that module's place."""
    folder = _shipping_dir() / "working_dir"
    folder.mkdir(exist_ok=True)
    return folder


@cache
def _shipping_dir() -> Path:
    """Where this process stages the packages it ships (removed when it exits)."""
    folder = Path(tempfile.mkdtemp(prefix="tune2048-shipped-families-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder
