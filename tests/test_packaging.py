"""The package as a user installs it: a wheel, not this checkout, in a fresh virtual environment.

The wheel is built offline (no build isolation: setuptools comes from the test extra) and
installed without its dependencies, which the fresh environment borrows from this one by a path
entry; so nothing is downloaded, and nothing of this checkout is importable there.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tuner.installed import digest_of, version

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
    venv.create(root / "env")  # without pip of its own: this one's installs into it
    bin_dir = root / "env" / "bin"
    done = run(sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "--quiet",
               "--no-deps", "--no-index", wheels[0], cwd=root)
    assert done.returncode == 0, done.stderr
    site = run(bin_dir / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])",
               cwd=root).stdout.strip()
    # The dependencies, from this environment; a plain path entry, so that the .pth files there
    # (this checkout's editable install among them) are not read.
    (Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    work = root / "elsewhere"
    work.mkdir()
    return bin_dir, work


# One test, so that the environment is built once whatever process pytest-xdist gives it to
@pytest.mark.subprocess
def test_the_wheel_holds_the_package_and_its_baselines_play_by_name_after_a_plain_install(
        installed):
    bin_dir, work = installed
    where = run(bin_dir / "python", "-c", "import engine, tuner.cli; print(engine.__file__); "
                "print(tuner.__file__); print(tuner.cli.__file__)", cwd=work)
    assert where.returncode == 0, where.stderr
    for line in where.stdout.split():
        assert Path(line).is_relative_to(bin_dir.parent) and "site-packages" in line, line
    shipped = run(bin_dir / "python", "-c", "from engine.baselines import baseline_names; "
                  "print(' '.join(baseline_names()))", cwd=work)
    expected = sorted(path.stem for path in (REPO_ROOT / "engine" / "baselines").glob("*.yaml"))
    assert shipped.stdout.split() == expected, shipped.stderr
    played = run(bin_dir / "tune", "play", "--weights", "classic-reference", "--depth", "1",
                 "--games", "2", cwd=work)
    assert played.returncode == 0, played.stderr
    assert "mean score" in played.stdout
    assert not list(work.iterdir())  # playing wrote nothing where it ran
    # A node with the wheel runs this checkout's code, as its Ray guard sees it (tuner.installed)
    code = run(bin_dir / "python", "-c", "from tuner import installed; c = installed.code(); "
               "print(c.version, c.digest, c.install, sep='\\n')", cwd=work)
    [wheel] = (bin_dir.parents[1] / "dist").glob("tune2048-*.whl")
    assert code.stdout.splitlines() == [
        version(), digest_of([REPO_ROOT / "engine", REPO_ROOT / "tuner"]),
        shlex.join(["pip", "install", str(wheel)])], code.stderr


def test_every_bound_is_one_ci_tests_and_ray_is_held_to_the_versions_tested():
    """pyproject.toml's lower bounds are what .ci/oldest.txt installs in CI's second environment;
    Ray's versions end at the newest one tested, since tune2048 uses Ray's private names
    (tuner/ray_api.py), and the Ray running these tests is inside them."""
    import importlib.metadata
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = [Requirement(text) for text in project["dependencies"] + [
        text for extra in project["optional-dependencies"].values() for text in extra]]
    pins = dict(line.split("#")[0].strip().split("==") for line in (
        REPO_ROOT / ".ci" / "oldest.txt").read_text(encoding="utf-8").splitlines()
        if line.split("#")[0].strip())
    bounded = [r for r in requirements if any(s.operator == ">=" for s in r.specifier)]
    assert len(bounded) >= 10
    for requirement in bounded:
        lower = next(s.version for s in requirement.specifier if s.operator == ">=")
        pin = pins.get(requirement.name.lower())
        assert pin is not None and requirement.specifier.contains(pin), (requirement, pin)
        assert pin.split(".")[:len(lower.split("."))] == lower.split("."), (requirement, pin)
    ray = next(r for r in requirements if r.name == "ray")
    assert any(s.operator == "<" for s in ray.specifier)
    assert ray.specifier.contains(importlib.metadata.version("ray"))
