"""engine.families.registry: families by name, module, file and entry point, and the rule that a
weights file never runs code from a file path written inside it."""

from __future__ import annotations

import itertools
import os
import sys
from pathlib import Path

import pytest
from conftest import ODD_FAMILY_FILE_NAMES, TWIN

from engine import Solver
from engine.families import (
    FAMILIES,
    Family,
    FamilyCodeError,
    FamilyDefinitionError,
    FamilyNotFound,
    Param,
    UntrustedFamilyFile,
    UntrustedFamilyModule,
    family_source_digest,
    get_family,
)
from engine.families.registry import (
    canonical_spec,
    family_names,
    origin,
    relative_spec,
)
from engine.families.specs import file_module_name
from engine.weights_file import WeightsFile, WeightsFileError, read_weights, write_weights

_unique = itertools.count()

# A small family, written through the public API only. Importing it leaves a marker file, which
# shows whether its code ran.
TINY = '''
from pathlib import Path

import numpy as np

from engine.families import Family, Heuristic, LineSum, Param, grid_lines, row_empty

Path(__file__).with_suffix(".imported").write_text("ran")


class Tiny(Family):
    name = "tiny"
    summary = "empty cells, weighted"
    params = (Param("empty", 2.0, 0.0, 10.0, "weight per empty cell"),)

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (weights[0] * row_empty(),)),))

    def reference(self, ranks, weights):
        rows, cols = grid_lines(ranks)
        return float(weights[0]) * sum(line.count(0) for line in rows + cols)


NOT_A_FAMILY = 42
'''


def write_family(directory: Path, stem: str | None = None) -> Path:
    """A family module in ``directory`` under a name no other test uses."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem or 'tinyfam'}_{next(_unique)}.py"
    path.write_text(TINY, encoding="utf-8")
    return path


def test_built_in_names_resolve_to_the_built_in_families():
    for name, family in FAMILIES.items():
        assert get_family(name) is family
        assert origin(name) == "built-in"
    assert family_names()[:4] == ["classic", "snake", "features", "combined"]


def test_a_file_spec_is_relative_to_its_base_directory_and_imported_once(tmp_path):
    path = write_family(tmp_path / "families")
    spec = f"families/{path.name}:Tiny"
    family = get_family(spec, tmp_path)
    assert isinstance(family, Family) and family.name == "tiny"
    assert path.with_suffix(".imported").exists()
    path.with_suffix(".imported").unlink()
    assert get_family(canonical_spec(spec, tmp_path)) is family  # same file, same family
    assert not path.with_suffix(".imported").exists(), "imported once"
    # one tile: 15 empty cells counted along the rows and 15 along the columns, weight 2
    assert Solver(family, depth=0).evaluate([[0] * 4] * 3 + [[2, 0, 0, 0]]) == 60.0


def test_canonical_and_relative_specs_round_trip(tmp_path):
    spec = canonical_spec("fams/x.py:X", tmp_path)
    assert spec == f"{tmp_path / 'fams' / 'x.py'}:X"
    assert relative_spec(spec, tmp_path / "runs" / "r") == "../../fams/x.py:X"
    assert canonical_spec(relative_spec(spec, tmp_path / "a"), tmp_path / "a") == spec
    for name in ("classic", "pkg.mod:Cls"):
        assert canonical_spec(name, tmp_path) == relative_spec(name, tmp_path) == name


def test_a_module_spec_imports_an_importable_module(tmp_path, monkeypatch):
    path = write_family(tmp_path, "modfam")
    monkeypatch.syspath_prepend(str(tmp_path))
    family = get_family(f"{path.stem}:Tiny")
    assert family.param_names == ("empty",)


def test_a_registered_entry_point_is_listed_and_loaded(tmp_path, monkeypatch):
    path = write_family(tmp_path, "epfam")
    info = tmp_path / "tune2048_test_families-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tune2048-test-families\n"
                                   "Version: 1.0\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        f"[tune2048.families]\ntiny-registered = {path.stem}:Tiny\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "tiny-registered" in family_names()
    assert origin("tiny-registered") == "registered by tune2048-test-families"
    assert get_family("tiny-registered").name == "tiny"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("clasic", r"unknown family 'clasic' \(built-in: classic, snake"),
        ("no_such_module_xyz:Fam", "no module named 'no_such_module_xyz' is installed"),
        ("missing.py:Tiny", "family file .*missing.py not found"),
        ("{file}:Nope", "'Nope' is not defined in"),
        ("{file}:NOT_A_FAMILY", "42 is not a subclass of engine.families.Family"),
        ("", "expected a family name or spec"),
    ],
)
def test_a_spec_that_names_nothing_usable_says_what_is_missing(tmp_path, spec, message):
    spec = spec.format(file=write_family(tmp_path).name)
    with pytest.raises(FamilyNotFound, match=message):
        get_family(spec, tmp_path)


def test_a_family_file_that_fails_to_import_names_the_error_and_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "broken_fam.py"
    bad.write_text("x = 1\ndef oops(:\n", encoding="utf-8")
    with pytest.raises(FamilyCodeError) as err:
        get_family(f"{bad}:X")
    assert str(err.value).startswith("broken_fam.py:2: in family 'broken_fam.py:X': importing it "
                                     "raised SyntaxError: invalid syntax")


# --- the weights-file rule ---------------------------------------------------------------------


def tiny_weights_file(tmp_path: Path) -> tuple[Path, Path]:
    """A family file and a weights file that names it, in different directories."""
    family_file = write_family(tmp_path / "families")
    runs = tmp_path / "runs"
    runs.mkdir()
    weights_path = runs / "best.yaml"
    write_weights(weights_path, WeightsFile(canonical_spec(str(family_file) + ":Tiny"),
                                            {"empty": 3.0}, 1, {}))
    family_file.with_suffix(".imported").unlink(missing_ok=True)  # write_weights imported it
    return family_file, weights_path


def test_a_weights_file_records_its_family_file_relative_to_itself(tmp_path):
    family_file, weights_path = tiny_weights_file(tmp_path)
    text = weights_path.read_text()
    assert f"family: ../families/{family_file.name}:Tiny" in text


def test_reading_a_weights_file_never_runs_a_family_file_it_names(tmp_path, monkeypatch):
    family_file, weights_path = tiny_weights_file(tmp_path)
    marker = family_file.with_suffix(".imported")
    monkeypatch.chdir(tmp_path)
    for module in [m for m in list(sys.modules) if m.startswith("tune2048_family_")]:
        monkeypatch.delitem(sys.modules, module)  # a fresh process's view
    from engine.families import specs

    monkeypatch.setattr(specs, "_found", {})
    with pytest.raises(WeightsFileError) as err:
        read_weights(weights_path)
    message = str(err.value)
    assert message.startswith(f"{weights_path}: family: ")
    assert f"add --family-file families/{family_file.name}" in message
    assert not marker.exists(), "the family file's code did not run"
    with pytest.raises(WeightsFileError):
        Solver.from_file(weights_path)
    assert not marker.exists()
    # another file of the same name is not the same file
    other = write_family(tmp_path / "elsewhere")
    with pytest.raises(WeightsFileError, match="--family-file"):
        read_weights(weights_path, family_files=[other])
    # naming the file allows it
    loaded = read_weights(weights_path, family_files=[family_file])
    assert marker.exists()
    assert loaded.weights == {"empty": 3.0}
    assert loaded.family == f"{family_file}:Tiny"
    solver = Solver.from_file(weights_path, depth=0, family_files=[family_file])
    assert solver.family.name == "tiny" and solver.weights == {"empty": 3.0}


def test_a_missing_family_file_in_a_weights_file_is_named(tmp_path):
    family_file, weights_path = tiny_weights_file(tmp_path)
    family_file.unlink()
    with pytest.raises(WeightsFileError, match=f"family: family file .*{family_file.name} not "
                                               "found"):
        read_weights(weights_path, family_files=[tmp_path / "families" / family_file.name])


def test_weights_files_load_a_module_family_only_when_the_module_is_named(tmp_path, monkeypatch):
    path = write_family(tmp_path / "site", "installedfam")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    weights_path = tmp_path / "w.yaml"
    write_weights(weights_path, WeightsFile(f"{path.stem}:Tiny", {"empty": 1.5}, 2, {}))
    with pytest.raises(WeightsFileError) as err:
        read_weights(weights_path)
    assert str(err.value) == (
        f"{weights_path}: family: family '{path.stem}:Tiny' is code in module {path.stem}, which "
        f"runs only when you name the module too: add --family-module {path.stem}")
    with pytest.raises(WeightsFileError, match="--family-module"):
        read_weights(weights_path, family_modules=[f"{path.stem}.sub", "installedfam"])
    loaded = read_weights(weights_path, family_modules=[path.stem])
    assert loaded.family == f"{path.stem}:Tiny" and loaded.depth == 2
    solver = Solver.from_file(weights_path, depth=0, family_modules=[path.stem])
    assert solver.weights == {"empty": 1.5}


def test_untrusted_family_file_error_carries_the_path(tmp_path):
    path = write_family(tmp_path)
    with pytest.raises(UntrustedFamilyFile) as err:
        get_family(f"{path.name}:Tiny", tmp_path, allow_files=())
    assert err.value.path == path
    assert get_family(f"{path.name}:Tiny", tmp_path, [path]).param_names == ("empty",)


# --- the trust rule for modules: a weights file alone never runs code ---------------------------

TRUST_PROBE = '''
import json, sys
from engine.weights_file import WeightsFileError, read_weights

path, modules = sys.argv[1], json.loads(sys.argv[2])
try:
    loaded = read_weights(path, family_modules=modules)
    outcome = "loaded " + loaded.family
except WeightsFileError as err:
    outcome = str(err)
print(json.dumps({"outcome": outcome, "imported": sorted(set(sys.modules) & set(%r))}))
'''
WATCHED = ["this", "antigravity", "venv", "venv.__main__", "webbrowser", "trustfam_probe"]


def probe_weights(tmp_path: Path, spec: str, modules: list[str]) -> dict:
    """Read a weights file naming ``spec`` in a fresh process; what came of it, and which of the
    watched modules that process imported."""
    import json
    import subprocess

    weights_path = tmp_path / "w.yaml"
    weights_path.write_text(
        "format: tune2048-weights\nversion: 1\n"
        f"family: '{spec}'\ndepth: 1\nweights: {{empty: 1.0}}\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path / "site"), str(Path(__file__).resolve().parents[2])]))
    result = subprocess.run(
        [sys.executable, "-c", TRUST_PROBE % WATCHED, weights_path.name, json.dumps(modules)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, check=True)
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.parametrize(
    ("spec", "module"),
    [("this:Foo", "this"), ("antigravity:X", "antigravity"),
     ("venv.__main__:X", "venv.__main__"), ("trustfam_probe:Tiny", "trustfam_probe")],
)
@pytest.mark.subprocess
def test_a_weights_file_naming_a_module_imports_nothing(tmp_path, spec, module):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "trustfam_probe.py").write_text(TINY, encoding="utf-8")

    found = probe_weights(tmp_path, spec, [])

    assert found["outcome"] == (
        f"w.yaml: family: family '{spec}' is code in module {module}, which runs only when you "
        f"name the module too: add --family-module {module}")
    assert found["imported"] == []  # not `this`, not a browser, not venv's command line
    assert not (tmp_path / "site" / "trustfam_probe.imported").exists()


@pytest.mark.subprocess
def test_a_weights_file_naming_a_module_loads_when_the_module_is_named(tmp_path):
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "trustfam_probe.py").write_text(TINY, encoding="utf-8")

    found = probe_weights(tmp_path, "trustfam_probe:Tiny", ["trustfam_probe"])

    assert found == {"outcome": "loaded trustfam_probe:Tiny", "imported": ["trustfam_probe"]}
    # naming it passes the rule, and then the module is what it is (this has no family)
    found = probe_weights(tmp_path, "this:Foo", ["this"])
    assert found["outcome"].startswith("w.yaml: family: family 'this:Foo': 'Foo' is not defined")
    assert found["imported"] == ["this"]


def test_get_family_refuses_an_unnamed_module_before_importing_it(monkeypatch):
    monkeypatch.delitem(sys.modules, "this", raising=False)
    with pytest.raises(UntrustedFamilyModule) as err:
        get_family("this:Foo", allow_modules=["that"])
    assert err.value.module == "this" and "this" not in sys.modules
    # built-in names need no naming
    assert get_family("classic", allow_files=(), allow_modules=()) is FAMILIES["classic"]


# --- definitions the engine cannot use are refused when found -----------------------------------

DUPLICATE = '''
from engine.families import Family, Param


class Dup(Family):
    name = "dup"
    params = (Param("a", 1.0, 0.0, 2.0, "a"), Param("b", 1.0, 0.0, 2.0, "b"),
              Param("a", 1.0, 0.0, 2.0, "a again"))


class NotATuple(Family):
    name = "not-a-tuple"
    params = {"a": Param("a", 1.0, 0.0, 2.0, "a")}
'''


@pytest.mark.parametrize(
    ("name", "message"),
    [("Dup", "parameter 'a' is declared twice (params: a, b, a)"),
     ("NotATuple", "params must be a tuple of engine.families.Param, got dict {'a': Param(")],
)
def test_a_family_with_unusable_params_is_refused_when_found(tmp_path, monkeypatch, name,
                                                            message):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / f"defs_{next(_unique)}.py"
    path.write_text(DUPLICATE, encoding="utf-8")
    with pytest.raises(FamilyDefinitionError) as err:
        get_family(f"{path.name}:{name}")
    assert str(err.value).startswith(f"family '{path.name}:{name}': {message}")
    with pytest.raises(FamilyDefinitionError, match="declared twice"):  # given as an instance
        Solver(type("Dup2", (Family,), {"params": (Param("x", 1, 0, 2, "x"),) * 2})())


# --- two family files of one name, from different folders ---------------------------------------

def test_two_family_files_of_one_name_are_two_families(twin_families):
    spec_a, spec_b = twin_families
    a, b = get_family(spec_a), get_family(spec_b)
    assert (a.name, a.param_names) == ("twin-a", ("alpha",))
    assert (b.name, b.param_names) == ("twin-b", ("beta",))
    assert type(a).__module__ != type(b).__module__
    assert Solver(spec_a, {"alpha": 1.0}, depth=0).family is a


# --- a family file of any name ------------------------------------------------------------------

@pytest.mark.parametrize("name", ODD_FAMILY_FILE_NAMES)
def test_a_family_file_of_any_name_is_imported_under_a_private_name(tmp_path, name):
    """Its name is never a module name: it shadows no module (json.py) and needs none
    (my-family.py); docs/families.md, "The name of a family file"."""
    path = tmp_path / name
    path.write_text(TWIN.format(cls="F", name="odd", param="w"), encoding="utf-8")
    modules = dict(sys.modules)
    family = get_family(f"{path}:F")
    assert family.name == "odd" and family.param_names == ("w",)
    assert type(family).__module__ == file_module_name(path)
    assert set(sys.modules) - set(modules) == {file_module_name(path)}
    assert all(sys.modules[name] is module for name, module in modules.items())
    assert Solver(f"{path}:F", {"w": 1.0}, depth=0).play(1).score > 0


# --- the digest of a family's source, to notice an edit between runs -----------------------------

def test_the_source_digest_follows_the_file_and_module(tmp_path, monkeypatch):
    import hashlib

    path = write_family(tmp_path / "site", "digestfam")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    file_spec, module_spec = f"{path}:Tiny", f"{path.stem}:Tiny"
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert family_source_digest(file_spec) == expected
    assert family_source_digest(f"site/{path.name}:Tiny", tmp_path) == expected
    assert family_source_digest(module_spec) == expected  # found, not imported
    assert path.stem not in sys.modules and not path.with_suffix(".imported").exists()
    path.write_text(TINY + "# edited\n", encoding="utf-8")
    assert family_source_digest(file_spec) != expected
    assert family_source_digest(module_spec) != expected
    for name in ("classic", "ranked"):
        assert family_source_digest(name) is None
    with pytest.raises(FamilyNotFound, match="no module named 'no_such_module_xyz'"):
        family_source_digest("no_such_module_xyz:F")
