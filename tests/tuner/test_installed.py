"""tuner.installed: the version from the package's metadata, and the identity of its code."""

from __future__ import annotations

import importlib.metadata
import shlex
import shutil
from pathlib import Path

import pytest

from tuner import installed

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("engine", "tuner")


def copy_packages(into: Path, reverse: bool = False) -> list[Path]:
    """The code files of this checkout's packages copied into ``into``, created in sorted
    order or its reverse (a directory then lists them in another order)."""
    copied = []
    for package in PACKAGES:
        files = sorted((ROOT / package).rglob("*"), reverse=reverse)
        for path in files:
            if path.is_file() and path.suffix in installed.CODE_SUFFIXES:
                target = into / package / path.relative_to(ROOT / package)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, target)
        copied.append(into / package)
    return copied


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> tuple[list[Path], list[Path]]:
    """Two copies of the packages, made one after the other, in folders of different depths."""
    base = tmp_path_factory.mktemp("installed")
    return copy_packages(base / "a"), copy_packages(base / "b" / "deeper", reverse=True)


def test_the_version_is_the_one_pyproject_sets():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'\nversion = "{installed.version()}"\n' in pyproject
    assert installed.version() == importlib.metadata.version("tune2048")


def test_a_checkout_that_pip_never_installed_knows_its_version(monkeypatch):
    """Run from its folder on PYTHONPATH, as on a machine where nothing installs."""
    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    installed.version.cache_clear()
    try:
        pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        assert f'\nversion = "{installed.version()}"\n' in pyproject
    finally:
        installed.version.cache_clear()


def test_the_identity_is_the_same_wherever_the_packages_live_and_in_any_order(copies):
    first, second = copies
    assert installed.digest_of(first) == installed.digest_of(list(reversed(second)))


@pytest.mark.parametrize("change", ["one byte of a module", "one byte of a baseline",
                                    "a module added", "a module renamed"])
def test_the_identity_changes_with_the_code(tmp_path, change):
    packages = copy_packages(tmp_path)
    before = installed.digest_of(packages)
    engine = tmp_path / "engine"
    if change.startswith("one byte"):
        path = engine / ("board.py" if "module" in change else "baselines/classic-reference.yaml")
        data = bytearray(path.read_bytes())
        data[-2] ^= 1
        path.write_bytes(bytes(data))
    elif change == "a module added":
        (engine / "extra.py").write_text("", encoding="utf-8")
    else:
        (engine / "board.py").rename(engine / "board2.py")
    assert installed.digest_of(packages) != before


def test_caches_and_other_files_are_not_code(tmp_path):
    packages = copy_packages(tmp_path)
    before = installed.digest_of(packages)
    (tmp_path / "tuner" / "__pycache__").mkdir()
    (tmp_path / "tuner" / "__pycache__" / "installed.cpython-311.pyc").write_bytes(b"\0")
    (tmp_path / "tuner" / "notes.txt").write_text("mine", encoding="utf-8")
    assert installed.digest_of(packages) == before


def test_this_process_knows_its_code_once():
    code = installed.code()
    assert installed.code() is code
    assert len(code.digest) == 64 and code.version == installed.version()
    # run from this checkout: the command installs it
    assert code.install == shlex.join(["pip", "install", "-e", str(ROOT)])


def test_the_install_command_of_an_extra_installs_this_checkout_with_it():
    """Run from a checkout, as the README installs it (``pip install -e ".[plot]"``)."""
    assert installed.install_command("plot") == shlex.join(
        ["pip", "install", "-e", f"{ROOT}[plot]"])


@pytest.mark.parametrize(("direct_url", "source"), [
    ('{"url": "file:///wheels/tune2048-0.4.0-py3-none-any.whl"}',
     "/wheels/tune2048-0.4.0-py3-none-any.whl"),
    ('{"url": "file:///src/tune%202048", "dir_info": {}}', "/src/tune 2048"),
    (None, f"tune2048=={installed.version()}"),
], ids=["a wheel", "a folder", "a release"])
def test_the_install_command_of_an_installed_package_installs_what_pip_installed_it_from(
        tmp_path, monkeypatch, direct_url, source):
    class Distribution:
        def read_text(self, name):
            assert name == "direct_url.json"
            return direct_url

    monkeypatch.setattr(installed, "__file__", str(tmp_path / "site-packages" / "tuner" /
                                                   "installed.py"))  # not in a checkout
    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Distribution())
    assert installed.install_command() == shlex.join(["pip", "install", source])
    with_plot = source.replace("==", "[plot]==") if direct_url is None else f"{source}[plot]"
    assert installed.install_command("plot") == shlex.join(["pip", "install", with_plot])


def test_a_refusal_names_both_codes_where_they_run_and_what_to_do():
    worker = installed.Code("a" * 64, "0.4.0", "node-7", "pip install /elsewhere")
    driver = installed.Code("b" * 64, "0.4.0", "head", "pip install -e /work/tune2048")
    assert installed.refusal(worker, driver) == (
        "a Ray node (node-7) runs tune2048 0.4.0 of code aaaaaaaaaaaa, this driver (head) runs "
        "tune2048 0.4.0 of code bbbbbbbbbbbb: install the driver's code on every node "
        "(pip install -e /work/tune2048)")
