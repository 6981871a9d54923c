"""tuner.cluster.shipping: a family's code as Ray ships it to workers, and the spec it goes by there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ODD_FAMILY_FILE_NAMES, TWIN

from engine import Solver
from engine.families import FamilyCodeError, FamilyNotFound
from tuner.cluster.shipping import ship_family


@pytest.mark.subprocess
def test_two_family_files_of_one_name_ship_to_workers_under_different_names(twin_families,
                                                                           tmp_path):
    spec_a, spec_b = twin_families
    (shipped_a, worker_a), (shipped_b, worker_b) = ship_family(spec_a), ship_family(spec_b)
    assert Path(shipped_a).name != Path(shipped_b).name
    assert worker_a.endswith(".family:F") and worker_b.endswith(".family:G")
    assert ship_family(spec_a) == (shipped_a, worker_a)  # the same file ships once
    assert (Path(shipped_a) / "family.py").read_text() == (tmp_path / "a" / "fam.py").read_text()
    # a worker: the shipped packages on its path, the user's files out of reach
    (tmp_path / "a" / "fam.py").unlink()
    (tmp_path / "b" / "fam.py").unlink()
    worker = (
        "import sys\n"
        "from engine.families import get_family\n"
        f"a, b = get_family({worker_a!r}), get_family({worker_b!r})\n"
        "print(a.name, a.param_names[0], b.name, b.param_names[0])\n")
    env_path = os.pathsep.join([str(Path(shipped_a).parent), str(Path(shipped_b).parent),
                                str(Path(__file__).resolve().parents[3])])
    result = subprocess.run([sys.executable, "-c", worker], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=env_path), timeout=120, check=True)
    assert result.stdout.split() == ["twin-a", "alpha", "twin-b", "beta"]


@pytest.mark.subprocess
def test_a_family_file_of_any_name_ships_under_a_private_name(tmp_path):
    """On a worker the copy is the module ``family`` of its own package, whatever the file's
    name: a module's (json.py), or none (my-family.py, my.family.py, x.py.py, __init__.py)."""
    (tmp_path / "files").mkdir()
    shipped = {}
    for i, name in enumerate(ODD_FAMILY_FILE_NAMES):
        path = tmp_path / "files" / name
        path.write_text(TWIN.format(cls="F", name=f"odd-{i}", param="w"), encoding="utf-8")
        folder, on_workers = ship_family(f"{path}:F")
        assert on_workers == f"{Path(folder).name}.family:F"
        shipped[on_workers] = folder
    worker = (
        "import sys\n"
        "from engine.families import get_family\n"
        f"print(*(get_family(spec).name for spec in {list(shipped)!r}))\n")
    env_path = os.pathsep.join([*(str(Path(f).parent) for f in shipped.values()),
                                str(Path(__file__).resolve().parents[3])])
    result = subprocess.run([sys.executable, "-c", worker], capture_output=True, text=True,
                            cwd=tmp_path, env=dict(os.environ, PYTHONPATH=env_path), timeout=120,
                            check=False)
    assert result.stdout.split() == [f"odd-{i}" for i in range(len(shipped))], result.stderr


@pytest.mark.parametrize("name", ["fails.py", "__init__.py"])  # a package's own file name too
def test_code_failing_on_a_worker_names_the_file_as_the_user_named_it(tmp_path, monkeypatch,
                                                                      name):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / name
    path.write_text(TWIN.format(cls="F", name="fails", param="w").replace(
        "        return Heuristic(", "        1 / 0\n        return Heuristic("), encoding="utf-8")
    shipped, worker = ship_family(f"{path}:F")
    monkeypatch.syspath_prepend(str(Path(shipped).parent))
    with pytest.raises(FamilyCodeError) as err:
        Solver(worker, depth=0)
    assert str(err.value) == (f"{path}:13: in family '{path}:F': heuristic() raised "
                              "ZeroDivisionError: division by zero")


def test_built_in_and_module_families_ship_as_before(tmp_path, monkeypatch):
    assert ship_family("classic") == (None, "classic")
    package = tmp_path / "pkgroot" / "shipme_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "fam.py").write_text(TWIN.format(cls="F", name="mod", param="w"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "pkgroot"))
    module, worker = ship_family("shipme_pkg.fam:F")
    assert module.__name__ == "shipme_pkg" and worker == "shipme_pkg.fam:F"


def test_a_family_file_that_cannot_be_read_is_one_line(tmp_path):
    with pytest.raises(FamilyNotFound, match=r"missing\.py: cannot read it: No such file"):
        ship_family(f"{tmp_path / 'missing.py'}:F")
