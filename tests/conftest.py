"""Test-session settings: every Ray in the suite runs with token authentication, as the Ray that
`tune` starts does, with a token made for the session.

Ray 2.60 reads a process's authentication mode (RAY_AUTH_MODE) when it imports Ray, and when the
variable is unset it decides for itself (on for a new local cluster, recorded in the starting
process's environment; off for a driver given an address), so a suite that let it decide would
mix authenticated and unauthenticated peers between in-process Rays, clusters and `tune`
subprocesses. The mode is therefore set here, before anything imports Ray, and the token reaches
every process in RAY_AUTH_TOKEN, so that the suite writes nothing to ~/.ray. Tests that need other
settings (tests/tuner/cluster/test_ray_security.py) run their processes with their own environment.
"""

import os
import secrets
import signal

os.environ["RAY_AUTH_MODE"] = "token"
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
os.environ.pop("RAY_AUTH_TOKEN_PATH", None)

# OpenBLAS's kernels are pinned when tune2048 is imported before numpy (engine.blas), as `tune`
# does; a test module that imports numpy first would otherwise run CMA-ES on this machine's own
# kernels, and runs recorded elsewhere would not resume exactly on machines with AVX-512.
import engine  # noqa: F401

# The suite runs with Python's own Ctrl-C handler, which the signal tests start from, even where
# it was started with Ctrl-C ignored (a shell's background job), which Python then leaves so.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# ---- `tune` in a process of its own, with a stand-in for Ray ---------------------------------------

import _posixsubprocess
import contextlib
import fcntl
import functools
import importlib.util
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from tune_forks import Forks, TuneForks

REPO_ROOT = Path(__file__).resolve().parents[1]
EXIT_RAY_GUARD = 99
# Stands in for Ray in a `tune` started by run_tune: input that wrongly gets through validation
# reaches the tuning loop, which then exits with EXIT_RAY_GUARD instead of starting Ray.
RAY_GUARD = f"""\
import atexit
import os
import sys

sys.stderr.write("test guard: the tuning loop imported ray\\n")
sys.stderr.flush()
atexit._run_exitfuncs()  # what tune left to clean at its exit (the folder it ships families in)
os._exit({EXIT_RAY_GUARD})
"""


# ---- the engine's kernels, once for the session --------------------------------------------------

def pytest_configure(config: pytest.Config) -> None:
    """The engine's compiled kernels, loaded or compiled once before pytest-xdist starts the test
    processes (in a process of their own: the tests' see no family imported). From a cold numba
    cache (a fresh clone, as in CI) every test process, ``tune`` and Ray worker that needed a
    family before its kernels were cached compiled them itself, about 10 s a family each, several
    at once; from a warm cache this takes a second."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return
    done = subprocess.run([sys.executable, str(REPO_ROOT / "tests" / "compile_kernels.py")],
                          cwd=REPO_ROOT,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(import_path())},
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise pytest.UsageError(f"the engine's kernels did not compile:\n{done.stderr}")


# ---- what a test starts, and the unit tier ---------------------------------------------------------

# What keeps a test out of the unit tier (pyproject.toml's markers): a test file marks what its
# tests start; a test using one of these fixtures of this file is marked by it.
NOT_UNIT = ("slow", "ray", "subprocess")
MARKED_BY_FIXTURE = {"no_ray": "subprocess", "cluster": "ray"}


@pytest.hookimpl(tryfirst=True)  # before -m selects by the markers
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Marks ``unit`` every test that starts nothing (``-m unit`` runs them), and puts the long
    tests first (``slow``; the sort keeps the order within each kind): spread over processes as
    they are asked for (``--dist load``), the suite then ends on short tests instead of one
    process running a long one alone (measured on 2 cores: a tail of minutes)."""
    for item in items:
        for fixture, marker in MARKED_BY_FIXTURE.items():
            if fixture in item.fixturenames:
                item.add_marker(marker)
        if not any(item.get_closest_marker(name) for name in NOT_UNIT):
            item.add_marker("unit")
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# A unit test that starts a process fails, in every run, naming where: the unit tier stays quick
# and its markers true. Each way to start one is wrapped for the session and checks a flag, set
# only while a unit test sets up or runs (a test's own monkeypatch then restores the wrapper).
# What a library starts on its own (matplotlib asking fc-list for fonts) is let through; what
# this checkout's code or Ray starts is not, nor a fork of the `tune` fork server.
_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep
_RAY = os.path.dirname(importlib.util.find_spec("ray").origin) + os.sep  # not imported
_unit_test: list[str] = []  # the unit test setting up or running, if any
_started: list[str] = []  # what it started


def _guard_start(start: Callable, name: str) -> Callable:
    @functools.wraps(start)
    def guarded(*args, **kwargs):
        if _unit_test:
            _refuse_start(name)
        return start(*args, **kwargs)
    return guarded


def _refuse_start(name: str) -> None:
    """Fails the unit test running, unless the process is a library's own (the first caller
    outside the standard library is not this checkout's code or Ray's)."""
    frame = sys._getframe(2)
    while frame and frame.f_code.co_filename.startswith(("<", _STDLIB)) and (
            "-packages" + os.sep not in frame.f_code.co_filename):
        frame = frame.f_back
    where = frame.f_code.co_filename if frame else ""
    ours = where.startswith(str(REPO_ROOT) + os.sep) and "-packages" + os.sep not in where
    if ours or where.startswith(_RAY):
        _started.append(f"{_unit_test[0]}: a unit test that started a process ({name}, at "
                        f"{where}:{frame.f_lineno}): mark it @pytest.mark.subprocess, or "
                        "@pytest.mark.ray where it starts Ray")
        pytest.fail(_started[-1], pytrace=False)


for _module, _name in ((subprocess, "_fork_exec"), (_posixsubprocess, "fork_exec"), (os, "fork"),
                       (os, "forkpty"), (os, "posix_spawn"), (os, "posix_spawnp"), (os, "system")):
    if hasattr(_module, _name):
        setattr(_module, _name, _guard_start(getattr(_module, _name), f"{_module.__name__}.{_name}"))
Forks.start = _guard_start(Forks.start, "a fork of the tune fork server")


@contextlib.contextmanager
def _starting_nothing(item: pytest.Item):
    if item.get_closest_marker("unit"):
        _unit_test.append(item.nodeid)
    _started.clear()
    try:
        yield
    finally:
        _unit_test.clear()
        if _started:  # whatever the test made of the refusal (caught it, failed otherwise)
            pytest.fail(_started[0], pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    with _starting_nothing(item):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    with _starting_nothing(item):
        return (yield)


@pytest.fixture(scope="session")
def no_ray(tmp_path_factory) -> Path:
    """A folder holding the stand-in ``ray`` package, to put first on PYTHONPATH."""
    guard = tmp_path_factory.mktemp("no_ray")
    (guard / "ray").mkdir()
    (guard / "ray" / "__init__.py").write_text(RAY_GUARD, encoding="utf-8")
    return guard


_forks: dict[tuple[str, ...], TuneForks] = {}


def import_path(*first: str | Path) -> list[str]:
    """What a process of the suite's imports from: ``first``, this checkout, then PYTHONPATH."""
    return [str(p) for p in (*first, REPO_ROOT, os.environ.get("PYTHONPATH", "")) if p]


def tune_forks(*first: str | Path) -> TuneForks:
    """This test process's fork server whose import path starts with ``first`` then this
    checkout (started on first use, ended with the session)."""
    paths = tuple(import_path(*first))
    if paths not in _forks:
        _forks[paths] = TuneForks(list(paths), Path(tempfile.mkdtemp(prefix="tune-forks-")))
    return _forks[paths]


@pytest.fixture(scope="session", autouse=True)
def forks_ended():
    yield
    for forks in _forks.values():
        forks.close()
        shutil.rmtree(forks.scratch, ignore_errors=True)


def run_tune(args: list[str], cwd: Path, guard: Path | None, timeout: float = 300,
             preludes: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Run ``tune ARGS`` in ``cwd`` and capture its output; with ``guard``, Ray is the stand-in;
    ``preludes``: the test's code, run first. A fork of a warm process (tests/tune_forks.py):
    what a subprocess gives, without a new interpreter's start (0.3 to 2 s a command)."""
    forks = tune_forks(*([guard] if guard is not None else []))
    return forks.run(args, cwd, forks.environment(), preludes, timeout=timeout)


# ---- what the whole session shares ------------------------------------------------------------------


def made_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder ``make(folder)`` fills once for the whole session: the first test process (of
    pytest-xdist's) to need it makes it, under a lock, and the others read it. Tests only read
    it (copy it to change it)."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the folder every test process's own folder is in
    folder = shared / f"{name}-made-once"
    lock = os.open(shared / f"{name}.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (shared / f"{name}.done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # a process that died making it
            folder.mkdir()
            make(folder)
            (shared / f"{name}.done").touch()
    finally:
        os.close(lock)
    return folder


# ---- signal handlers ------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def signal_handlers_restored():
    """Each test starts with the handlers the last one found: ``tune``'s ``main()``, called in this
    process, installs its own (``tuner.interrupts``), which later tests must not inherit."""
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    yield
    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


# ---- evaluators that compute games instead of playing them ------------------------------------


class JobsEvaluator:
    """A stand-in evaluator for the tuning loop: a subclass says what a job's games give
    (``play(jobs, progress)``, each job's results in seed order), and ``run`` hands it every
    unit a schedule gives out as a job of its own, in order, as one CPU would; a unit holds at
    most ``unit_games`` games."""

    workers = 1
    unit_games = 1 << 20

    def run(self, jobs, schedule, progress=None):
        from dataclasses import replace

        from tuner.games.policy import UnitSize

        while not schedule.done:
            for unit in schedule.next_units(0, UnitSize(self.unit_games)):
                job = replace(jobs[unit.job], seeds=unit.seeds)
                schedule.record(unit, self.play([job], progress)[0])
        return schedule.results()

    def cpu_seconds(self, start, end):
        return self.workers * (end - start)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        pass


TWIN = '''
import numpy as np

from engine.families import Family, Heuristic, LineSum, Param, grid_lines, row_empty


class {cls}(Family):
    name = "{name}"
    summary = "empty cells, weighted"
    params = (Param("{param}", 2.0, 0.0, 10.0, "weight per empty cell"),)

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (weights[0] * row_empty(),)),))

    def reference(self, ranks, weights):
        rows, cols = grid_lines(ranks)
        return float(weights[0]) * sum(line.count(0) for line in rows + cols)
'''


# Names a family file may have like any other (docs/families.md, "The name of a family file"): a
# standard module's, tune2048's and Ray's own, names that are no module name (a dash, dots, a
# space, quotes, a backslash, a colon), a package's __init__, and non-ASCII letters.
ODD_FAMILY_FILE_NAMES = ("json.py", "engine.py", "ray.py", "my-family.py", "my.family.py",
                         "x.py.py", "with space.py", "quo'te\".py", 'tri"""ple.py',
                         "back\\slash.py", "a:b.py", "__init__.py", "fämily.py")


@pytest.fixture
def twin_families(tmp_path) -> tuple[str, str]:
    """``a/fam.py:F`` and ``b/fam.py:G``: one file name, two families (what the registry and
    Ray's shipping must keep apart)."""
    for folder, cls, param in (("a", "F", "alpha"), ("b", "G", "beta")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "fam.py").write_text(
            TWIN.format(cls=cls, name=f"twin-{folder}", param=param), encoding="utf-8")
    return f"{tmp_path}/a/fam.py:F", f"{tmp_path}/b/fam.py:G"


# ---- a Ray cluster of three nodes ------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster():
    """A head with no CPU and two worker nodes of one CPU each, on this machine: every game runs
    on a worker. One a test module: its tests leave the nodes as they found them."""
    from ray.cluster_utils import Cluster  # Ray, for the tests that ask for a cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0})
    for _ in range(2):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    yield cluster
    cluster.shutdown()
