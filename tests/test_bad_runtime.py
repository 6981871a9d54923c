"""Runtime bad input: what the config corpus (tests/test_bad_input.py) cannot hold.

Files that must not be replaced or cannot be written, two ``tune`` processes on one run directory,
values that pass checking and would fail later, interrupts at awkward moments, family code that
misbehaves on the workers, and what was left from round two. Every case runs the real command line
in a process of its own (a fork of a warm one, ``tune``; a fresh interpreter, ``start``, where
the case interrupts it) and asserts its message (one ``tune: error:`` line, or the documented
interrupt line), its exit status, and that nothing was written or lost: the working folder is
the same before and after, and a run's checkpoint is intact.

Faults a test cannot cause for real are injected into the ``tune`` process by a few lines run
before the command: a full disk (``FULL_DISK``: a write's temporary file is swapped for /dev/full,
so the write fails with the kernel's own ENOSPC), a read-only directory (``READ_ONLY``: as a
read-only mount answers, for a test that may run as root), and games played in the driver instead
of on Ray (``SERIAL``), so that a run reaches its checkpoints in a second. Cases that start Ray
are marked slow; the module takes about two minutes on 2 cores, one without them.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT, tune_forks

from tuner.store import checkpoint as ckpt

pytestmark = pytest.mark.subprocess  # every case runs tune in a process of its own

DATA = REPO_ROOT / "tests" / "data" / "runtime"
QUICK = REPO_ROOT / "configs" / "quick.yaml"
WEIGHTS = REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml"
FAMILY = DATA / "misbehaving_family.py"
PREFIX = "tune: error: "
EXIT_FAILURE, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 1, 2, 130
INTERRUPT_LINES = ("tune: interrupted", "tune: interrupted (SIGTERM)")
# a progress line off a terminal, once games have gone on for a few seconds (tuner.games.progress)
PROGRESS_LINE = re.compile(r"^.+: [\d,]+ of (up to )?[\d,]+ games \(\d+%\), \d+:\d\d:\d\d elapsed")
MAX_LINE = 600  # characters of a message line

# ---- what runs in the `tune` subprocess before the command --------------------------------------

SERIAL = """
import tuner.cluster.ray_evaluator as _ray_evaluator
_ray_evaluator.evaluator_for = (lambda ray, families, **options:
                                _ray_evaluator.SerialEvaluator(ray.games_per_task))
"""
# TUNE_TEST_FULL_AT="NAME:N": from the N-th write of a file named NAME on ("*": any file), every
# write fails as on a full disk (the temporary file is written to /dev/full: ENOSPC).
FULL_DISK = """
import os, tempfile, types
import engine.atomic as _atomic
_name, _, _nth = os.environ["TUNE_TEST_FULL_AT"].partition(":")
_seen = [0]
_full = [False]
def _mkstemp(*args, **kwargs):
    fd, path = tempfile.mkstemp(*args, **kwargs)
    target = os.path.basename(path).partition(_atomic.TEMP_MARKER)[0][1:]
    if _name in ("*", target):
        _seen[0] += 1
        _full[0] = _full[0] or _seen[0] >= int(_nth)
    if _full[0]:
        full = os.open("/dev/full", os.O_WRONLY)
        os.dup2(full, fd)
        os.close(full)
    return fd, path
_atomic.tempfile = types.SimpleNamespace(mkstemp=_mkstemp)
"""
# TUNE_TEST_READ_ONLY=DIR: DIR and what is under it answer as on a read-only mount.
READ_ONLY = """
import errno, os, tempfile, types
import engine.atomic as _atomic
_read_only = os.path.realpath(os.environ["TUNE_TEST_READ_ONLY"])
def _under(path):
    path = os.path.realpath(path)
    return path == _read_only or path.startswith(_read_only + os.sep)
_access = os.access
def _checked_access(path, mode, *args, **kwargs):
    if mode & os.W_OK and _under(path):
        return False
    return _access(path, mode, *args, **kwargs)
os.access = _checked_access
def _mkstemp(*args, dir=None, **kwargs):
    if dir is not None and _under(dir):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(dir))
    return tempfile.mkstemp(*args, dir=dir, **kwargs)
_atomic.tempfile = types.SimpleNamespace(mkstemp=_mkstemp)
"""
# TUNE_TEST_STARTS_UNTIL=PATH: after SERIAL, Ray "starts" until PATH exists (a minute at most):
# what a `tune stop` that writes PATH meets while a job starts, before its first generation.
SLOW_START = """
import os, time
import tuner.cluster.ray_evaluator as _ray_evaluator
_started = _ray_evaluator.evaluator_for
def _evaluator_for(*args, **kwargs):
    deadline = time.monotonic() + 60
    while not os.path.exists(os.environ["TUNE_TEST_STARTS_UNTIL"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return _started(*args, **kwargs)
_ray_evaluator.evaluator_for = _evaluator_for
"""
# TUNE_TEST_SIGNAL_IN="MODULE:SIGNAL": the signal comes inside the __set_name__ of a cached
# property of a class of MODULE, as that class is made (Python 3.11 wraps what __set_name__
# raises in RuntimeError).
SIGNAL_IN_SET_NAME = """
import functools, os, signal
_module, _, _signal = os.environ["TUNE_TEST_SIGNAL_IN"].partition(":")
_set_name = functools.cached_property.__set_name__
def __set_name__(self, owner, name):
    if owner.__module__ == _module:
        os.kill(os.getpid(), signal.Signals[_signal])
    return _set_name(self, owner, name)
functools.cached_property.__set_name__ = __set_name__
"""
MAIN = "\nfrom tuner.cli.main import main\nsys.exit(main())\n"


def command(args: list[str], preludes: tuple[str, ...] = ()) -> list[str]:
    """``tune ARGS`` as a Python command line, with these preludes run first."""
    code = "import sys\n" + "".join(preludes) + MAIN
    return [sys.executable, "-c", code, *map(str, args)]


def environment(**extra: str) -> dict[str, str]:
    paths = [str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p),
            "PYTHONUNBUFFERED": "1", **extra}


def tune(args: list, cwd: Path, *preludes: str, timeout: float = 120,
         **env: str) -> subprocess.CompletedProcess:
    """Run ``tune ARGS`` in ``cwd`` to its end, in a fork of a warm process (conftest's
    ``tune_forks``), these preludes run first."""
    forks = tune_forks()
    return forks.run(args, cwd, forks.environment(PYTHONUNBUFFERED="1", **env), preludes, timeout)


def start(args: list, cwd: Path, *preludes: str, **env: str) -> subprocess.Popen:
    """Start ``tune ARGS`` in a session of its own: its group is what it and Ray started."""
    return subprocess.Popen(command(args, preludes), cwd=cwd, env=environment(**env),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


# ---- what a case asserts ----------------------------------------------------------------------

def snapshot(root: Path) -> dict[str, object]:
    """Every path under ``root``, links not followed: a file's bytes, a link's target, a
    directory, or another kind of file (a FIFO, read never)."""
    seen: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder, name)
            mode = path.lstat().st_mode
            key = str(path.relative_to(root))
            if stat.S_ISLNK(mode):
                seen[key] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                seen[key] = path.read_bytes()
            else:
                seen[key] = ("dir" if stat.S_ISDIR(mode) else "special", stat.S_IFMT(mode))
    return seen


def error_line(result, code: int, advice: int = 0) -> str:
    """Exit status ``code``, no traceback, and on stderr one ``tune: error:`` line (after any
    log lines of a run) followed by ``advice`` lines saying how to go on; returns the error."""
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode == code, output
    lines = result.stderr.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith(PREFIX)]
    assert len(errors) == 1, result.stderr
    assert len(lines) - errors[0] - 1 == advice, result.stderr
    assert len(lines[errors[0]]) <= MAX_LINE, result.stderr
    return lines[errors[0]]


def refused(result, *expected: str) -> str:
    """Bad input: exit status 2, one line on stderr and nothing else, holding ``expected``."""
    line = error_line(result, EXIT_BAD_INPUT)
    assert result.stderr.splitlines() == [line] and result.stdout == "", result.stderr
    for text in expected:
        assert text in line, line
    return line


def write_config(path: Path, **changes) -> Path:
    """configs/quick.yaml made small (depth 0, few games), with dotted keys changed
    (``run__name`` for run.name)."""
    document = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    document["search"]["depth"] = 0
    document["evaluation"]["games"] = 4
    document["validation"] = {"games": 4, "top_k": 1}
    document["cmaes"]["max_generations"] = 3
    document["ray"]["games_per_task"] = 4
    for dotted, value in changes.items():
        keys = dotted.split("__")
        section = document
        for key in keys[:-1]:
            section = section.setdefault(key, {})
        section[keys[-1]] = value
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def work(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    shutil.copyfile(WEIGHTS, folder / "w.yaml")
    return folder


@pytest.fixture(scope="module")
def stopped_run(tmp_path_factory) -> Path:
    """A run of configs/quick.yaml (made small) stopped after generation 1 of 3, as Ctrl-C
    leaves one, played in this process: copy it for a case (``copy_run``)."""
    from tuner.config import load_config
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.run import TuningRun

    folder = tmp_path_factory.mktemp("stopped")
    write_config(folder / "quick.yaml")
    cwd = Path.cwd()
    os.chdir(folder)  # the config's output_dir, outputs, is relative
    try:
        config = load_config("quick.yaml")
        run = TuningRun.start(config, config.run_dir, progress=False)
        run.step(SerialEvaluator(config.ray.schedule))
    finally:
        os.chdir(cwd)
    return folder


RUN_DIR = Path("outputs", "quick")  # where quick.yaml puts its run, relative to its folder


def copy_run(stopped_run: Path, work: Path) -> Path:
    """The stopped run and its config, copied into ``work``; returns the run directory,
    relative to ``work`` (as commands run there name it)."""
    shutil.copyfile(stopped_run / "quick.yaml", work / "quick.yaml")
    shutil.copytree(stopped_run / "outputs", work / "outputs")
    return RUN_DIR


def assert_intact(run_dir: Path, generation: int) -> None:
    """The run directory's checkpoint loads, at ``generation``, belongs to the stored config
    (the run can be resumed), and no temporary file is left."""
    assert ckpt.load_state(run_dir).generation == generation
    assert not [p for p in run_dir.iterdir() if ckpt.CHECKPOINT_FILE in p.name and
                p.name != ckpt.CHECKPOINT_FILE]
    assert ckpt.load_state(run_dir).config == ckpt.read_stored_config(run_dir)


# ================================================================================================
# Files: the one rule (engine.atomic.check_target) for --output, --plot and a run's files
# ================================================================================================

def make_special(work: Path, kind: str) -> Path:
    """A path of this kind in ``work`` (or a device's own path) for --output."""
    if kind in ("/dev/null", "/dev/full", "/dev/stdout"):
        return Path(kind)
    path = work / f"out-{kind}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "link-to-file":
        (work / "target.json").write_text("keep me\n", encoding="utf-8")
        path.symlink_to("target.json")
    elif kind == "link-to-dir":
        (work / "target-dir").mkdir()
        path.symlink_to("target-dir")
    elif kind == "dangling-link":
        path.symlink_to("nowhere.json")
    elif kind == "directory":
        path.mkdir()
    elif kind == "under-a-file":
        (work / "a-file").write_text("x\n", encoding="utf-8")
        path = work / "a-file" / "out.json"
    elif kind == "missing-directory":
        path = work / "no-such-dir" / "out.json"
    return path


@pytest.mark.parametrize(("kind", "fmt", "expected"), [
    ("/dev/null", "json", "it is a character device"),
    ("/dev/full", "c", "it is a character device"),
    ("/dev/stdout", "json", "it is a symbolic link (to /proc/self/fd/1)"),
    ("fifo", "json", "it is a FIFO"),
    ("link-to-file", "c", "it is a symbolic link (to target.json)"),
    ("link-to-dir", "json", "it is a symbolic link (to target-dir)"),
    ("dangling-link", "json", "(to nowhere.json, which does not exist)"),
    ("directory", "json", "it is a directory"),
    ("under-a-file", "json", "a-file is a file, not a directory"),
    ("missing-directory", "c", "no such directory"),
])
def test_export_refuses_an_output_it_must_not_replace(work, kind, fmt, expected):
    output = make_special(work, kind)
    before = snapshot(work)
    device = os.lstat(output) if kind.startswith("/dev/") else None

    result = tune(["export", "w.yaml", "--format", fmt, "--output", output], work, timeout=30)

    line = refused(result, f"{output}: cannot write: ", expected)
    if kind in ("/dev/null", "/dev/full", "fifo", "/dev/stdout", "link-to-file"):
        assert line.endswith("(leave out --output to write to standard output)")
    assert snapshot(work) == before
    if device is not None:  # the device (or link) is still there, not a file renamed over it
        assert os.lstat(output) == device


def test_export_onto_the_weights_file_itself_is_refused(work):
    (work / "alias.yaml").symlink_to("w.yaml")
    before = snapshot(work)
    for output in ("w.yaml", "./w.yaml"):
        refused(tune(["export", "alias.yaml", "--format", "json", "--output", output], work,
                     timeout=30), f"{output}: cannot write: it is the weights file being exported")
    assert snapshot(work) == before


def test_export_into_a_read_only_folder_is_refused(work):
    (work / "locked").mkdir()
    before = snapshot(work)
    result = tune(["export", "w.yaml", "--format", "c", "--output", "locked/w.c"], work,
                  READ_ONLY, TUNE_TEST_READ_ONLY=str(work / "locked"), timeout=30)
    refused(result, "locked/w.c: cannot write: the directory locked is not writable")
    assert snapshot(work) == before


def test_export_of_a_full_disk_leaves_no_file(work):
    before = snapshot(work)
    result = tune(["export", "w.yaml", "--format", "json", "--output", "out.json"], work,
                  FULL_DISK, TUNE_TEST_FULL_AT="*:1")
    refused(result, "out.json: cannot write: No space left on device")
    assert snapshot(work) == before  # no out.json, no temporary file


def test_a_tables_export_on_a_full_disk_keeps_the_previous_export_whole(work):
    assert tune(["export", "w.yaml", "--format", "tables", "--output", "tables"], work,
                timeout=60).returncode == 0
    before = snapshot(work)
    result = tune(["export", "w.yaml", "--format", "tables", "--output", "tables"], work,
                  FULL_DISK, TUNE_TEST_FULL_AT="manifest.json:1", timeout=60)
    refused(result, "manifest.json: cannot write: No space left on device")
    assert snapshot(work) == before  # its tables were not replaced under the old manifest


@pytest.mark.parametrize("planted", ["manifest.json", "table0.npy"])
def test_a_tables_export_refuses_a_link_or_fifo_among_its_files(work, planted):
    assert tune(["export", "w.yaml", "--format", "tables", "--output", "tables"], work,
                timeout=60).returncode == 0
    (work / "tables" / planted).unlink()
    if planted == "manifest.json":
        os.mkfifo(work / "tables" / planted)  # reading it would block for ever
        expected = "not empty and not a tables export"
    else:
        (work / "tables" / planted).symlink_to("../w.yaml")
        expected = "table0.npy: cannot write: it is a symbolic link"
    before = snapshot(work)
    result = tune(["export", "w.yaml", "--format", "tables", "--output", "tables"], work,
                  timeout=60)
    refused(result, expected)
    assert snapshot(work) == before


@pytest.mark.parametrize("tag", ["!!binary aGVsbG8=", "!!timestamp 2024-01-02", "!!set {a, b}"])
def test_yaml_tagged_provenance_exports_as_json_text(work, tag):
    text = (work / "w.yaml").read_text(encoding="utf-8")
    (work / "w.yaml").write_text(text.replace("provenance:", f"provenance:\n  note: {tag}", 1),
                                 encoding="utf-8")
    result = tune(["export", "w.yaml", "--format", "json"], work, timeout=30)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    import json

    note = json.loads(result.stdout)["provenance"]["note"]
    assert note == {"!!binary aGVsbG8=": "aGVsbG8=", "!!timestamp 2024-01-02": "2024-01-02",
                    "!!set {a, b}": ["a", "b"]}[tag]


@pytest.mark.parametrize("kind", ["/dev/null", "link-to-file", "fifo"])
def test_report_refuses_a_plot_file_it_must_not_replace(stopped_run, work, kind):
    run_dir = copy_run(stopped_run, work)
    plot = make_special(work, kind)
    before = snapshot(work)
    result = tune(["report", run_dir, "--plot", plot], work, timeout=30)
    refused(result, f"{plot}: cannot write: ")
    assert snapshot(work) == before


@pytest.mark.parametrize("name", [ckpt.CONFIG_FILE, ckpt.CHECKPOINT_FILE, ckpt.HISTORY_FILE])
def test_report_refuses_to_plot_over_a_run_file(stopped_run, work, name):
    run_dir = copy_run(stopped_run, work)
    before = snapshot(work)
    result = tune(["report", run_dir, "--plot", run_dir / name], work, timeout=30)
    refused(result, f"{run_dir / name}: cannot write: it is one of a run's own files")
    assert snapshot(work) == before


def test_report_plot_on_a_full_disk_is_one_line(stopped_run, work):
    run_dir = copy_run(stopped_run, work)
    before = snapshot(work)
    result = tune(["report", run_dir, "--plot", "plot.png"], work, FULL_DISK,
                  TUNE_TEST_FULL_AT="plot.png:1", timeout=60)
    line = error_line(result, EXIT_BAD_INPUT)
    assert line == f"{PREFIX}plot.png: cannot write: No space left on device"
    assert snapshot(work) == before


def test_resume_in_a_read_only_run_directory_is_refused(stopped_run, work):
    run_dir = copy_run(stopped_run, work)
    before = snapshot(work)
    mode = (work / run_dir).stat().st_mode
    (work / run_dir).chmod(0o555)  # read-only for a user; as root, READ_ONLY answers as a
    try:  # read-only mount would
        result = tune(["resume", run_dir], work, READ_ONLY, SERIAL,
                      TUNE_TEST_READ_ONLY=str(work / run_dir))
    finally:
        (work / run_dir).chmod(mode)
    refused(result, f"{run_dir}: run directory is not writable")
    assert snapshot(work) == before
    assert_intact(work / run_dir, 1)


def test_a_run_into_a_read_only_folder_leaves_nothing(work):
    (work / "outputs").mkdir()
    write_config(work / "quick.yaml")
    before = snapshot(work)
    result = tune(["run", "quick.yaml"], work, READ_ONLY, SERIAL,
                  TUNE_TEST_READ_ONLY=str(work / "outputs"))
    refused(result, "outputs: not writable, so outputs/quick cannot be created")
    assert snapshot(work) == before


def test_a_disk_full_before_the_first_checkpoint_leaves_nothing_but_its_games(work):
    write_config(work / "quick.yaml")
    before = snapshot(work)
    result = tune(["run", "quick.yaml"], work, SERIAL, FULL_DISK,
                  TUNE_TEST_FULL_AT="history.csv:1")
    line = error_line(result, EXIT_FAILURE, advice=1)
    assert "stopped before the first generation completed: cannot write" in line
    # the first generation's games were played: the checkpoint's write failed
    said = re.search(r"No space left on device; the (\d+) games it played are kept: make room, "
                     r"then start it again \(it plays them no more\) with:", line)
    assert said, line
    assert result.stderr.splitlines()[-1] == "  tune run quick.yaml"
    kept = snapshot(work)
    units = kept.pop("outputs/.quick.new/games.jsonl").splitlines()[1:]  # after its header
    assert sum(len(json.loads(unit)["games"]) for unit in units) == int(said[1]) > 0
    assert {name for name in kept if name not in before} == {"outputs", "outputs/.quick.new"}
    again = tune(["run", "quick.yaml", "--quiet"], work, SERIAL)  # the advice works
    assert again.returncode == 0, again.stderr
    assert ckpt.load_state(work / "outputs" / "quick").finished


def test_a_disk_full_after_a_checkpoint_keeps_it_and_says_how_to_resume(work):
    write_config(work / "quick.yaml")
    result = tune(["run", "quick.yaml"], work, SERIAL, FULL_DISK,
                  TUNE_TEST_FULL_AT="history.csv:2")
    line = error_line(result, EXIT_FAILURE, advice=1)
    assert "No space left on device; the checkpoint of generation 1 is kept" in line
    assert result.stderr.splitlines()[-1] == "  tune resume outputs/quick"
    run_dir = work / "outputs" / "quick"
    assert_intact(run_dir, 1)
    assert not [p.name for p in work.iterdir() if p.name.startswith(".")]
    resumed = tune(["resume", run_dir, "--quiet"], work, SERIAL)  # the advice works
    assert resumed.returncode == 0, resumed.stderr
    assert ckpt.load_state(run_dir).finished


def test_a_hint_quotes_a_path_a_shell_would_split(work):
    write_config(work / "my quick.yaml", run__output_dir="my outputs; $HOME")
    result = tune(["run", "my quick.yaml", "--workers", "1"], work, SERIAL, FULL_DISK,
                  TUNE_TEST_FULL_AT="history.csv:2")
    error_line(result, EXIT_FAILURE, advice=1)
    hint = result.stderr.splitlines()[-1]
    assert hint == "  tune resume 'my outputs; $HOME/quick' --workers 1"
    resumed = tune([*shlex.split(hint)[1:], "--quiet"], work, SERIAL)  # pasted, it works
    assert resumed.returncode == 0, resumed.stderr
    assert ckpt.load_state(work / "my outputs; $HOME" / "quick").finished


@pytest.mark.parametrize("full_at", ["config.yaml:1", "*:1"])
def test_a_disk_full_as_a_resume_records_its_options_says_how_to_run_it_again(
        stopped_run, work, full_at):
    # --workers changes the stored config, written before anything else: the resume stops
    # there, puts nothing in place, and says which command to run again, options and all
    run_dir = copy_run(stopped_run, work)
    before = snapshot(work)
    result = tune(["resume", run_dir, "--workers", "2"], work, SERIAL, FULL_DISK,
                  TUNE_TEST_FULL_AT=full_at)
    line = error_line(result, EXIT_FAILURE, advice=1)
    assert line.endswith("config.yaml: No space left on device: make room (or fix the "
                         "permissions), then run it again:"), line
    assert result.stderr.splitlines()[-1] == f"  tune resume {run_dir} --workers 2"
    assert snapshot(work) == before
    again = tune(["resume", run_dir, "--workers", "2", "--quiet"], work, SERIAL)
    assert again.returncode == 0, again.stderr  # the advice works once there is room


def test_a_disk_full_after_a_resume_changed_its_config_names_the_kept_generation(
        stopped_run, work):
    run_dir = copy_run(stopped_run, work)
    result = tune(["resume", run_dir, "--workers", "2"], work, SERIAL, FULL_DISK,
                  TUNE_TEST_FULL_AT="history.csv:1")
    line = error_line(result, EXIT_FAILURE, advice=1)
    assert "the checkpoint of generation 1 is kept" in line, line
    assert result.stderr.splitlines()[-1] == f"  tune resume {run_dir} --workers 2"
    # the full disk kept the resume from putting the stored config back: the run still resumes
    resumed = tune(["resume", run_dir, "--quiet"], work, SERIAL)
    assert resumed.returncode == 0, resumed.stderr
    assert ckpt.load_state(work / run_dir).finished


def test_a_finished_run_without_its_best_file_is_not_said_to_have_one(stopped_run, work):
    from tuner.loop.run import CMA_STOP_PREFIX

    run_dir = copy_run(stopped_run, work)
    state = ckpt.load_state(work / run_dir)
    state.finished, state.cma_stop = True, CMA_STOP_PREFIX + "tolfun"
    ckpt.save_state(work / run_dir, state)
    (work / run_dir / ckpt.BEST_FILE).unlink()
    result = tune(["resume", run_dir], work, SERIAL)
    assert result.returncode == 0, result.stderr
    assert "pycma's own stop criteria ended it (tolfun)" in result.stdout
    assert "best.yaml and validation.csv are missing" in result.stdout, result.stdout
    assert "best weights are in" not in result.stdout


# ================================================================================================
# Two tune processes on one run directory: the second says which process holds it
# ================================================================================================

LOCKER = """
import sys, time
from pathlib import Path
from tuner.store.run_dir import Lock
locks = [Lock(Path(path)) for path in sys.argv[1:]]
print("locked", flush=True)
time.sleep(120)
"""


@pytest.fixture
def holder():
    """Start a process that locks directories as a running `tune` does; yields a function that
    takes the directories and returns the process."""
    started: list[subprocess.Popen] = []

    def hold(*directories: Path) -> subprocess.Popen:
        process = subprocess.Popen([sys.executable, "-c", LOCKER, *map(str, directories)],
                                   stdout=subprocess.PIPE, text=True, env=environment())
        started.append(process)
        assert process.stdout.readline().strip() == "locked"
        return process

    yield hold
    for process in started:
        process.kill()
        process.wait()


def test_a_second_resume_of_a_running_run_is_refused(stopped_run, work, holder):
    run_dir = copy_run(stopped_run, work)
    running = holder(work / run_dir)
    before = snapshot(work)
    result = tune(["resume", run_dir], work, SERIAL)
    refused(result, f"{run_dir}: in use by tune process {running.pid}", f"kill -INT {running.pid}")
    assert snapshot(work) == before


def test_a_second_run_of_the_same_config_is_told_who_runs_it(stopped_run, work, holder):
    run_dir = copy_run(stopped_run, work)
    running = holder(work / run_dir)
    before = snapshot(work)
    result = tune(["run", "quick.yaml"], work, SERIAL)
    refused(result, f"{run_dir}: in use by tune process {running.pid}")
    assert snapshot(work) == before


def test_overwrite_while_the_run_is_resumed_is_refused(stopped_run, work, holder):
    run_dir = copy_run(stopped_run, work)
    running = holder(work / run_dir)
    write_config(work / "other.yaml", search__depth=1)
    before = snapshot(work)
    result = tune(["run", "other.yaml", "--overwrite"], work, SERIAL)
    refused(result, f"{run_dir}: in use by tune process {running.pid}")
    assert snapshot(work) == before
    assert_intact(work / run_dir, 1)


@pytest.mark.parametrize("second", [["run", "quick.yaml"], ["run", "quick.yaml", "--overwrite"],
                                    ["resume", "outputs/quick"]])
def test_a_run_being_started_is_named_with_its_process(work, holder, second):
    write_config(work / "quick.yaml")
    staging = work / "outputs" / ".quick.new"
    staging.mkdir(parents=True)
    (staging / "config.yaml").write_text("run: {}\n", encoding="utf-8")
    starting = holder(staging)
    before = snapshot(work)
    result = tune(second, work, SERIAL)
    expected = (f"outputs/quick: a run is being started there by tune process {starting.pid}"
                if second[0] == "run" else f"being started there by tune process {starting.pid}")
    refused(result, expected)
    assert snapshot(work) == before


def test_overwrite_while_another_overwrite_is_staged_is_refused(stopped_run, work, holder):
    run_dir = copy_run(stopped_run, work)
    staging = work / "outputs" / ".quick.new"
    staging.mkdir()
    starting = holder(staging)
    before = snapshot(work)
    result = tune(["run", "quick.yaml", "--overwrite"], work, SERIAL)
    refused(result, f"a run is being started there by tune process {starting.pid}")
    assert snapshot(work) == before
    assert_intact(work / run_dir, 1)


def test_a_real_second_run_waits_for_no_one(work):
    """Two real `tune run`s of one config: the second is refused while the first runs, naming
    it, and the first finishes as if alone."""
    write_config(work / "quick.yaml", search__depth=1, evaluation__games=24,
                 cmaes__max_generations=4)
    first = start(["run", "quick.yaml", "--quiet"], work, SERIAL)
    try:
        deadline = time.monotonic() + 60
        staging, run_dir = work / "outputs" / ".quick.new", work / "outputs" / "quick"
        while not (staging.exists() or run_dir.exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        second = tune(["run", "quick.yaml"], work, SERIAL)
        if first.poll() is None:  # the first still runs: refused, naming it
            refused(second, f"tune process {first.pid}")
        _out, err = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, err
    assert ckpt.load_state(work / "outputs" / "quick").finished


# ================================================================================================
# tune stop while a job starts: honoured once the job has its first checkpoint
# ================================================================================================

@pytest.mark.parametrize(("command", "stop_file", "generation"), [
    (["run", "quick.yaml"], RUN_DIR.parent / ".quick.new" / ckpt.STOP_FILE, 1),
    (["resume", RUN_DIR], RUN_DIR / ckpt.STOP_FILE, 2),
], ids=["run", "resume"])
def test_a_stop_asked_while_a_job_starts_stops_it_after_its_next_generation(
        stopped_run, work, command, stop_file, generation):
    """`tune stop` while Ray starts: reported as sent, and the job stops after the generation it
    then plays (a new run's first: there is a checkpoint to resume from), saying how to resume."""
    if command[0] == "run":
        write_config(work / "quick.yaml")
    else:
        copy_run(stopped_run, work)
    job = start(command, work, SERIAL, SLOW_START, TUNE_TEST_STARTS_UNTIL=str(work / stop_file))
    try:
        # the job's first line comes once it holds the directory, just before Ray starts
        assert job.stderr.readline().startswith("run quick: family classic")
        asked = tune(["stop", RUN_DIR], work)
        assert asked.returncode == 0, asked.stderr
        assert f"asked tune process {job.pid} to stop" in asked.stdout
        _out, err = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 0, err
    assert err.endswith(f"stopped on request after generation {generation} (checkpointed); "
                        f"resume with:\n  tune resume {RUN_DIR}\n"), err
    assert_intact(work / RUN_DIR, generation)
    assert not (work / RUN_DIR / ckpt.STOP_FILE).exists()
    resumed = tune(["resume", RUN_DIR, "--quiet"], work, SERIAL)  # the advice works
    assert resumed.returncode == 0, resumed.stderr
    assert ckpt.load_state(work / RUN_DIR).finished


# ================================================================================================
# Values that pass checking and would fail later: refused before anything is written, here with
# a run in place that --overwrite would replace (it is neither replaced nor touched)
# ================================================================================================

@pytest.mark.parametrize(("changes", "expected"), [
    ({"cmaes__sigma0": 5e-324}, "cmaes.sigma0: expected a number >= 1e-06"),
    ({"cmaes__sigma0": 1e-9}, "cmaes.sigma0: expected a number >= 1e-06"),
    ({"cmaes__popsize": 10_000, "evaluation__games": 100_000},
     "cmaes.popsize: a generation would hold 1,000,000,000 game results at once"),
    ({"cmaes__restarts": 10, "evaluation__games": 1_000},
     "doubled by 10 restarts to 6,144"),
    ({"validation__games": 100_000, "validation__top_k": 100},
     "validation: the final validation would hold 10,200,000 game results"),
    ({"run__seed": 2**64}, "run.seed: expected an integer from 0 to 9223372036854775807"),
    ({"run__output_dir": "outputs/" + "d" * 256}, "a folder name of 256 bytes"),
    ({"ray__connect_timeout": float("inf")}, "ray.connect_timeout: expected a finite number"),
    ({"ray__connect_timeout": 0}, "ray.connect_timeout: expected a number > 0.0"),
    ({"params__merges_weight": {"init": 1, "low": 5e-324, "high": 1.7e308, "scale": "log"}},
     "params.merges_weight.high"),
    # checked on the values a run resolves: auto's least population, the race's interval as
    # it is computed
    ({"cmaes__popsize": "auto", "cmaes__restarts": 10, "evaluation__games": 100_000},
     ("cmaes.popsize: a generation would hold 716,800,000 game results at once (popsize auto, "
      "at least pycma's default of 7, doubled by 10 restarts")),
    ({"evaluation__games": {"min": 2, "max": 8, "confidence": 0.9999999999999999}},
     "evaluation.games.confidence: 0.9999999999999999 is too close to 1"),
])
def test_a_value_that_would_fail_later_is_refused_before_anything_is_written(
        stopped_run, work, changes, expected):
    run_dir = copy_run(stopped_run, work)
    write_config(work / "edge.yaml", **changes)
    before = snapshot(work)
    result = tune(["run", "edge.yaml", "--overwrite"], work, SERIAL)
    refused(result, "edge.yaml: ", expected)
    assert snapshot(work) == before
    assert_intact(work / run_dir, 1)


@pytest.mark.parametrize(("args", "expected"), [
    (["play", "--games", "2", "--seed", str(2**64)], "--seed must be from 0 to 2**64 - GAMES"),
    (["play", "--games", "2", "--seed", str(2**64 - 1)], "--seed must be from 0 to 2**64 - GAMES"),
    (["play", "--games", "1", "--depth", "9"], "--depth: expected an integer from 0 to 8, got 9"),
    (["play", "--games", str(10**7)], "--games must be from 1 to 1,000,000"),
    (["compare", "w.yaml", "w.yaml", "--seed", "-1"], "--seed must be from 0"),
    (["family", "check", "classic", "--seed", "-1"], "--seed must be from 0 to"),
    (["family", "check", "classic", "--boards", str(10**12)], "--boards must be from 1 to"),
    (["noise", "--config", "quick.yaml", "--games", str(10**7)], "--games must be from 2 to"),
])
def test_a_command_line_value_that_would_fail_later_is_refused_at_once(work, args, expected):
    write_config(work / "quick.yaml")
    before = snapshot(work)
    refused(tune(args, work, timeout=30), expected)
    assert snapshot(work) == before


# ================================================================================================
# Family code that misbehaves while players are built: one line naming the family's file and
# line; before the first checkpoint exit 2 and nothing left, after it exit 1 and the run kept
# ================================================================================================

def family_line(kind: str) -> int:
    """The line of misbehaving_family.py that raises ``kind``."""
    lines = FAMILY.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if f"MISBEHAVE_LINE {kind}" in line)


def family_config(work: Path) -> Path:
    shutil.copyfile(FAMILY, work / FAMILY.name)
    return write_config(work / "family.yaml", family=f"{FAMILY.name}:Misbehaving")


RAISED = {"exception": "ValueError: a bug in the family's own code", "exit": "SystemExit: 3",
          "interrupt": "KeyboardInterrupt"}


def assert_names_the_family(line: str, kind: str) -> None:
    """The family guard's line (engine.families.guard): the family's file as the user knows it
    (not a Ray worker's copy of it) and the line that raised, and what it raised."""
    assert f"{FAMILY.name}:{family_line(kind)}: in family " in line, line
    assert line.endswith(f" raised {RAISED[kind]}"), line
    assert "/tmp/ray/" not in line and "_ray_pkg_" not in line, line


@pytest.mark.parametrize("kind", ["exception", "exit", "interrupt"])
def test_family_code_failing_before_the_first_checkpoint_leaves_nothing(work, kind):
    family_config(work)
    before = snapshot(work)
    result = tune(["run", "family.yaml"], work, SERIAL, MISBEHAVE=kind)
    assert_names_the_family(error_line(result, EXIT_BAD_INPUT), kind)  # after the run's log
    assert snapshot(work) == before


def test_family_code_failing_after_a_checkpoint_keeps_it_and_says_how_to_resume(work):
    family_config(work)
    run_dir = work / "outputs" / "quick"
    result = tune(["run", "family.yaml"], work, SERIAL, MISBEHAVE="exit",
                  MISBEHAVE_AFTER=str(run_dir / ckpt.CHECKPOINT_FILE))
    line = error_line(result, EXIT_FAILURE, advice=2)
    assert line.startswith(f"{PREFIX}stopped after generation 1 (checkpointed): ")
    assert_names_the_family(line, "exit")
    assert result.stderr.splitlines()[-2:] == [
        "fix the family's code, then resume with:", "  tune resume outputs/quick"]
    assert_intact(run_dir, 1)


def test_family_code_failing_in_tune_play_is_one_line(work):
    shutil.copyfile(FAMILY, work / FAMILY.name)
    before = snapshot(work)
    result = tune(["play", "--family", f"{FAMILY.name}:Misbehaving", "--games", "2",
                   "--depth", "0"], work, MISBEHAVE="interrupt", timeout=60)
    assert_names_the_family(refused(result), "interrupt")
    assert snapshot(work) == before


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["exit", "interrupt"])
def test_family_code_failing_on_ray_workers_is_one_line(work, kind):
    family_config(work)
    before = snapshot(work)
    result = tune(["run", "family.yaml", "--workers", "2"], work, MISBEHAVE=kind)
    line = error_line(result, EXIT_BAD_INPUT)
    assert_names_the_family(line, kind)
    assert "worker died" not in result.stderr  # SystemExit did not end the workers
    assert snapshot(work) == before


# ================================================================================================
# Interrupts: SIGTERM and SIGINT at a random moment of a command's work: exit status 130, one
# line, no traceback, and nothing of Ray left running. The moments are drawn from a seed made of
# the case and TUNE2048_SIGNAL_SEED: set it to try other moments.
# ================================================================================================

def group_alive(pgid: int) -> list[str]:
    """The processes of a process group that are still running (not zombies)."""
    alive = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            alive.append(f"{entry.name} {comm}")
    return alive


def wait_for(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def interrupt_at_random(process: subprocess.Popen, sig: signal.Signals, seed: str,
                        ready=None, window: tuple[float, float] = (0.2, 1.5)):
    """Send ``sig`` at a moment drawn from ``window`` seconds after ``ready()`` holds (or after
    the start); returns stdout and stderr once the process has ended."""
    if ready is not None:
        assert wait_for(lambda: ready() or process.poll() is not None, 60)
    rng = random.Random(seed + os.environ.get("TUNE2048_SIGNAL_SEED", ""))
    time.sleep(rng.uniform(*window))
    assert process.poll() is None, "the command ended before the signal: make it longer"
    process.send_signal(sig)
    return process.communicate(timeout=60)


def assert_interrupted(process: subprocess.Popen, out: str, err: str, sig) -> None:
    assert process.returncode == EXIT_INTERRUPTED, (process.returncode, err)
    assert "Traceback" not in out + err, err
    said = [line for line in err.splitlines() if not PROGRESS_LINE.match(line)]
    assert said in ([line] for line in INTERRUPT_LINES), err
    if sig == signal.SIGTERM:
        assert said == ["tune: interrupted (SIGTERM)"], err
    assert wait_for(lambda: not group_alive(process.pid), 15), group_alive(process.pid)


def ray_started(process: subprocess.Popen):
    return lambda: any("raylet" in p or "gcs_server" in p for p in group_alive(process.pid))


SIGNALS = [signal.SIGTERM, signal.SIGINT]


def loading_numpy(process: subprocess.Popen):
    """Whether the process has begun loading numpy: past Python's own start-up (a Ctrl-C inside
    it is Python's "Fatal Python error", before any of tune's code runs), into tune's loading."""
    def ready() -> bool:
        try:
            return "_multiarray_umath" in Path(f"/proc/{process.pid}/maps").read_text()
        except OSError:
            return False
    return ready


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_interrupting_a_command_while_it_loads(work, sig):
    before = snapshot(work)
    process = start(["family", "check", "classic"], work)
    out, err = interrupt_at_random(process, sig, f"loading {sig}", ready=loading_numpy(process),
                                   window=(0.0, 0.25))
    assert_interrupted(process, out, err, sig)
    assert snapshot(work) == before


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_interrupting_play_in_process(work, sig):
    before = snapshot(work)
    process = start(["play", "--weights", "w.yaml", "--games", "5000", "--depth", "1"], work)
    out, err = interrupt_at_random(process, sig, f"play {sig}", window=(1.0, 3.0))
    assert_interrupted(process, out, err, sig)
    assert snapshot(work) == before


@pytest.mark.parametrize(("module", "sig"), [("numpy._core.getlimits", signal.SIGINT),
                                           ("numba.core.controlflow", signal.SIGTERM)],
                         ids=["numpy-SIGINT", "numba-SIGTERM"])
def test_interrupting_play_while_a_class_of_numpy_or_numba_is_made(work, module, sig):
    """The signal lands in a __set_name__ as `tune play` loads numpy or numba (it once exited 1,
    with Python's RuntimeError "Error calling __set_name__")."""
    before = snapshot(work)
    process = start(["play", "--weights", "w.yaml", "--games", "2", "--depth", "1"], work,
                    SIGNAL_IN_SET_NAME, TUNE_TEST_SIGNAL_IN=f"{module}:{sig.name}")
    out, err = process.communicate(timeout=120)
    assert_interrupted(process, out, err, sig)
    assert snapshot(work) == before


@pytest.mark.slow
def test_interrupting_play_at_random_moments_of_its_start_up(work):
    """Ctrl-C or SIGTERM anywhere from the moment numpy loads (tune's own start-up: numpy,
    numba, the compiled kernels, the tables, the first games): each time, exit status 130 and
    the one line."""
    for run in range(8):
        sig = SIGNALS[run % 2]
        process = start(["play", "--weights", "w.yaml", "--games", "5000", "--depth", "1"],
                        work)
        out, err = interrupt_at_random(process, sig, f"play start-up {run}",
                                       ready=loading_numpy(process), window=(0.0, 2.5))
        assert_interrupted(process, out, err, sig)


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_interrupting_family_check(work, sig):
    before = snapshot(work)
    process = start(["family", "check", "classic", "--boards", "1000000"], work)
    out, err = interrupt_at_random(process, sig, f"check {sig}", window=(0.5, 3.0))
    assert_interrupted(process, out, err, sig)
    assert snapshot(work) == before


@pytest.mark.parametrize("sig", SIGNALS, ids=["SIGTERM", "SIGINT"])
def test_interrupting_report_while_it_plots(stopped_run, work, sig):
    run_dir = copy_run(stopped_run, work)
    before = snapshot(work)
    process = start(["report", run_dir, "--plot", "plot.png"], work)
    # matplotlib's import and the drawing take about a second: the signal comes in them
    out, err = interrupt_at_random(process, sig, f"report {sig}", window=(0.3, 0.6))
    assert_interrupted(process, out, err, sig)
    assert snapshot(work) == before  # no plot.png, no temporary file


# One signal a command, each costing a Ray: Ctrl-C and SIGTERM take one path through
# tuner.interrupts, whose own tests (tests/tuner/test_interrupts.py) hold both back.
@pytest.mark.slow
@pytest.mark.parametrize(("args", "sig"), [
    (["compare", "w.yaml", "w2.yaml", "--games", "4000", "--workers", "2"], signal.SIGTERM),
    (["noise", "--config", "quick.yaml", "--games", "20000", "--workers", "2"], signal.SIGINT),
    (["play", "--weights", "w.yaml", "--games", "20000", "--workers", "2"], signal.SIGTERM),
], ids=["compare-SIGTERM", "noise-SIGINT", "play-workers-SIGTERM"])
def test_interrupting_a_command_on_ray_leaves_nothing_running(work, args, sig):
    shutil.copyfile(WEIGHTS, work / "w2.yaml")
    write_config(work / "quick.yaml", search__depth=1)
    before = snapshot(work)
    process = start(args, work)
    rng = random.Random(" ".join(args) + str(sig) + os.environ.get("TUNE2048_SIGNAL_SEED", ""))
    if rng.random() < 0.3:  # while Ray starts
        out, err = interrupt_at_random(process, sig, str(args), window=(0.8, 2.0))
    else:  # while the games are played
        out, err = interrupt_at_random(process, sig, str(args), ready=ray_started(process),
                                       window=(1.0, 3.0))
    assert_interrupted(process, out, err, sig)
    assert snapshot(work) == before


# ================================================================================================
# Left from round two
# ================================================================================================

@pytest.mark.parametrize(("changes", "expected"), [
    ({"run__name": "n" * 101, "run__output_dir": "new/deeper"},
     "run.name: expected a name of letters, digits, '_', '.' or '-' of at most 100 characters"),
    ({"run__output_dir": "new/" + "d" * 300 + "/runs"}, "a folder name of 300 bytes"),
    ({"run__output_dir": "new/out\0put"}, "run.output_dir: expected a directory path, got"),
    ({"run__output_dir": "new/out\nput"}, "run.output_dir: expected a directory path, got"),
])
def test_a_name_the_file_system_cannot_take_leaves_nothing(work, changes, expected):
    write_config(work / "quick.yaml", **changes)
    before = snapshot(work)
    refused(tune(["run", "quick.yaml"], work, SERIAL), expected)
    assert snapshot(work) == before  # not even new/ or outputs/


def test_a_folder_made_for_a_run_that_cannot_start_is_removed_again(tmp_path):
    from tuner.errors import CheckpointError
    from tuner.store.run_dir import NewRun

    with pytest.raises(CheckpointError, match="File name too long"):
        NewRun(tmp_path / "new" / ("d" * 300) / "quick", overwrite=False, same_config=False)
    assert list(tmp_path.iterdir()) == []


def listening_socket():
    """A TCP port that accepts connections and never answers (no Ray there)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    return server


@pytest.mark.parametrize("where", ["refused", "silent"])
def test_a_ray_address_that_does_not_answer_leaves_no_run_directory(work, where):
    server = listening_socket() if where == "silent" else None
    address = f"127.0.0.1:{server.getsockname()[1]}" if server else "127.0.0.1:1"
    write_config(work / "quick.yaml", ray__connect_timeout=1)
    before = snapshot(work)
    try:
        result = tune(["run", "quick.yaml", "--address", address], work, timeout=60)
    finally:
        if server is not None:
            server.close()
    line = error_line(result, EXIT_FAILURE, advice=4)
    assert line.startswith(f"{PREFIX}stopped before the first generation completed: ")
    assert {"refused": f"no Ray cluster answers at '{address}'",
            "silent": f"'{address}' accepts connections but no Ray cluster answered"}[where] in line
    assert result.stderr.splitlines()[-3:] == [f"  tune run quick.yaml --address {address}",
                                               "or start it on this machine:",
                                               "  tune run quick.yaml --address local"]
    assert snapshot(work) == before  # no run directory, no staging, no outputs/


def test_resuming_at_an_address_that_refuses_keeps_the_run_resumable(stopped_run, work):
    run_dir = copy_run(stopped_run, work)
    write_config(work / "longer.yaml", cmaes__max_generations=4, ray__connect_timeout=1)
    before = snapshot(work)
    result = tune(["resume", run_dir, "--config", "longer.yaml", "--address", "127.0.0.1:1"],
                  work, timeout=60)
    line = error_line(result, EXIT_FAILURE, advice=4)
    assert "no Ray cluster answers at '127.0.0.1:1'" in line
    # the same command once the cluster answers, or on this machine: options carried
    assert result.stderr.splitlines()[-3:] == [
        "  tune resume outputs/quick --config longer.yaml --address 127.0.0.1:1",
        "or resume it on this machine:",
        "  tune resume outputs/quick --config longer.yaml --address local"]
    after = snapshot(work)
    log = after.pop(str(run_dir / ckpt.LOG_FILE))  # the log and the status tell what happened;
    assert b"no Ray cluster answers" in log  # nothing else changed: the stored config is as it was
    status = after.pop(str(run_dir / ckpt.STATUS_FILE))
    assert b'"state": "failed"' in status and b"no Ray cluster answers" in status
    before.pop(str(run_dir / ckpt.STATUS_FILE), None)  # the stopped run's own status
    assert after == before
    assert_intact(work / run_dir, 1)
    here = result.stderr.splitlines()[-1].split()[1:]  # the advice works (its games in process)
    resumed = tune([*here, "--quiet"], work, SERIAL)
    assert resumed.returncode == 0, resumed.stderr
    assert ckpt.load_state(work / run_dir).generation == 4


# ================================================================================================
# Writers and readers that disagree (round four): everything tune writes, it reads back
# ================================================================================================

def test_a_run_named_like_a_number_reads_its_own_files_back(work):
    """YAML 1.2 reads a bare 1.5e5 as a number: the user quotes it, and so must the run's
    config.yaml and best.yaml."""
    config = write_config(work / "n.yaml", cmaes__max_generations=1)
    config.write_text(config.read_text(encoding="utf-8").replace("name: quick", "name: '1.5e5'")
                      .replace("output_dir: outputs", "output_dir: '0o17'"), encoding="utf-8")
    assert tune(["run", "n.yaml", "--quiet"], work, SERIAL).returncode == 0
    run_dir = Path("0o17", "1.5e5")
    report = tune(["report", run_dir, "--no-plot"], work, timeout=60)
    assert report.returncode == 0 and "1.5e5" in report.stdout, report.stderr
    play = tune(["play", "--weights", run_dir / ckpt.BEST_FILE, "--games", "1", "--depth", "0"],
                work, timeout=60)
    assert play.returncode == 0, play.stderr


def test_a_family_file_its_run_directory_cannot_name_is_refused_before_anything_is_written(work):
    """Unrefused, the run would write a config.yaml and a best.yaml that name the family by a
    spec longer than their readers take: it could be neither resumed nor played."""
    (work / "mine.py").write_text("from engine.families.classic import Classic\n\n\n"
                                  "class Mine(Classic):\n    pass\n", encoding="utf-8")
    write_config(work / "deep.yaml", family="mine.py:Mine",
                 run__output_dir="/".join(["d"] * 130))  # the family file: ../ 131 times
    before = snapshot(work)
    refused(tune(["run", "deep.yaml"], work, SERIAL),
            "deep.yaml: family: from the run directory d/d/d/", "is a spec of 405 characters, "
            "but a family spec is read back only up to 256: put run.output_dir nearer")
    assert snapshot(work) == before


@pytest.mark.parametrize("keys", ['1: a\n  "1": b', "true: a\n  'true': b"])
def test_export_refuses_provenance_keys_that_json_writes_alike(work, keys):
    text = (work / "w.yaml").read_text(encoding="utf-8")
    (work / "w.yaml").write_text(text.replace("provenance:", f"provenance:\n  {keys}", 1),
                                 encoding="utf-8")
    before = snapshot(work)
    for output in (["--format", "json", "--output", "w.json"],
                   ["--format", "tables", "--output", "tables"]):
        refused(tune(["export", "w.yaml", *output], work, timeout=30),
                "w.yaml: provenance: two keys are both ", "in JSON")
    assert snapshot(work) == before
