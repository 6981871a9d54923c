"""The package as a user installs it: a wheel, not this checkout, in a fresh virtual environment.

The wheel is built offline (no build isolation: setuptools comes from the test extra) and
installed without its dependencies, which the fresh environment borrows from this one by a path
entry; so nothing is downloaded, and nothing of this checkout is importable there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
NOT_SOURCES = (".git", ".venv", "build", "*.egg-info", "__pycache__", ".*_cache", "runs", "outputs",
               "tests")


def run(*command, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> tuple[Path, Path]:
    """(the fresh environment's bin directory, a working directory outside the checkout)."""
    root = tmp_path_factory.mktemp("wheel")
    source = root / "source"  # a copy: building writes build/ and *.egg-info beside the sources
    shutil.copytree(REPO_ROOT, source, ignore=shutil.ignore_patterns(*NOT_SOURCES))
    built = run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                "--wheel-dir", root / "dist", source, cwd=root)
    assert built.returncode == 0, built.stderr
    wheels = list((root / "dist").glob("tune2048-*.whl"))
    assert len(wheels) == 1
    venv.create(root / "env", with_pip=True)
    bin_dir = root / "env" / "bin"
    done = run(bin_dir / "python", "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
               wheels[0], cwd=root)
    assert done.returncode == 0, done.stderr
    site = run(bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
               cwd=root).stdout.strip()
    # The dependencies, from this environment; a plain path entry, so that the .pth files there
    # (this checkout's editable install among them) are not read.
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = root / "elsewhere"
    work.mkdir()
    return bin_dir, work


def test_the_wheel_holds_the_package_and_not_the_checkout(installed):
    bin_dir, work = installed
    where = run(bin_dir / "python", "-c", "import cli, engine, tuner; print(cli.__file__); "
                "print(engine.__file__); print(tuner.__file__)", cwd=work)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.split():
        assert Path(line).is_relative_to(bin_dir.parent) and "site-packages" in line, line


def test_the_baselines_play_by_name_after_a_plain_install(installed):
    bin_dir, work = installed
    shipped = run(bin_dir / "python", "-c", "from engine.baselines import baseline_names; "
                  "print(' '.join(baseline_names()))", cwd=work)
    expected = sorted(path.stem for path in (REPO_ROOT / "engine" / "baselines").glob("*.yaml"))
    assert shipped.stdout.split() == expected, shipped.stderr
    played = run(bin_dir / "tune", "play", "--weights", "classic-reference", "--depth", "1",
                 "--games", "2", cwd=work)
    assert played.returncode == 0, played.stderr
    assert "mean score" in played.stdout
    assert not list(work.iterdir())  # playing wrote nothing where it ran
