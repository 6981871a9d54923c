"""engine.families.registry: families by name, module, file and entry point, and the rule that a
weights file never runs code from a file path written inside it."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest

from engine import Solver
from engine.families import (
    FAMILIES,
    Family,
    FamilyNotFound,
    UntrustedFamilyFile,
    get_family,
)
from engine.families.registry import canonical_spec, family_names, origin, relative_spec
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


def test_a_family_file_that_fails_to_import_names_the_error_and_line(tmp_path):
    bad = tmp_path / "broken_fam.py"
    bad.write_text("x = 1\ndef oops(:\n", encoding="utf-8")
    with pytest.raises(FamilyNotFound, match=r"importing family file .*broken_fam.py failed: "
                                             r"SyntaxError.*\(line 2\)"):
        get_family(f"{bad}:X")


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
    from engine.families import registry

    monkeypatch.setattr(registry, "_loaded", {})
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


def test_weights_files_may_name_installed_modules(tmp_path, monkeypatch):
    path = write_family(tmp_path / "site", "installedfam")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    weights_path = tmp_path / "w.yaml"
    write_weights(weights_path, WeightsFile(f"{path.stem}:Tiny", {"empty": 1.5}, 2, {}))
    loaded = read_weights(weights_path)
    assert loaded.family == f"{path.stem}:Tiny" and loaded.depth == 2


def test_untrusted_family_file_error_carries_the_path(tmp_path):
    path = write_family(tmp_path)
    with pytest.raises(UntrustedFamilyFile) as err:
        get_family(f"{path.name}:Tiny", tmp_path, allow_files=())
    assert err.value.path == path
    assert get_family(f"{path.name}:Tiny", tmp_path, [path]).param_names == ("empty",)
