"""The tuner's API runs the job ``tune run`` and ``tune resume`` run: a run started from Python
writes the same files and says the same lines as the command line; an observer of the caller's
stops it; a resume ends it as an uninterrupted run ends; ``open_run`` reads what it wrote; and
the API's names are the documented ones."""

from __future__ import annotations

import io
import json
import logging
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest
import yaml
from conftest import REPO_ROOT, run_tune

from engine import read_weights
from tuner import api
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt
from tuner.strategies import restore_strategy

# What differs between two runs of one config: how long things took, and when.
TIMING = [
    (re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} ", re.MULTILINE), ""),
    (re.compile(r"^compiling the engine for this heuristic.*\n", re.MULTILINE), ""),
    (re.compile(r"^(timing games|starting Ray) .*\n", re.MULTILINE), ""),  # waits, said if long
    (re.compile(r"^.*: [\d,]+ of (up to )?[\d,]+ games \(\d+%\), .* elapsed.*\n", re.MULTILINE),
     ""),  # progress off a terminal, in a long phase
    (re.compile(r"^price: .*$", re.MULTILINE), "price: P"),  # games timed as the run starts
    (re.compile(r"[\d,.]+ games/s"), "N games/s"),
    (re.compile(r"\d+% on games"), "N% on games"),
    (re.compile(r"elapsed \S+  ETA \S+"), "elapsed T  ETA T"),
]
TIMED_STATUS = ("pid", "process_start", "started", "updated", "generation_seconds",
                "eta_seconds", "share", "idle_cores", "idle_rate")


def tiny(output_dir: str = "outputs", name: str = "tiny") -> dict:
    """A run of seconds: two tuned weights, three generations of four candidates, depth 1."""
    return {
        "run": {"name": name, "output_dir": output_dir, "seed": 3},
        "family": "classic",
        "params": {
            "monotonicity_weight": {"init": 20, "low": 1, "high": 500, "scale": "log"},
            "merges_weight": {"init": 300, "low": 10, "high": 5000, "scale": "log"},
        },
        "search": {"depth": 1},
        "evaluation": {"games": 8},
        "cmaes": {"popsize": 4, "max_generations": 3},
        "validation": {"games": 8, "top_k": 2, "every": 2},
    }


def written(folder: Path, name: str = "tiny.yaml", **changes) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(tiny(**changes)), encoding="utf-8")
    return path


def timeless(text: str) -> str:
    for pattern, replacement in TIMING:
        text = pattern.sub(replacement, text)
    return text


@pytest.fixture
def said():
    """What the tuner logs during the test, as ``tune`` shows it on a terminal."""
    logger = logging.getLogger("tuner")
    kept = logger.handlers[:], logger.level, logger.propagate
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.handlers[:], logger.propagate = [handler], False
    logger.setLevel(logging.INFO)
    yield stream
    logger.handlers[:], level, logger.propagate = kept
    logger.setLevel(level)


class StopAt(api.Observer):
    """Asks the run to stop once ``generation`` is checkpointed, and notes every generation."""

    def __init__(self, generation: int, run_dir: str):
        self.generation, self.run_dir = generation, run_dir
        self.seen: list[int] = []

    def generation_ended(self, record, state) -> None:
        self.seen.append(record.generation)
        assert state.generation == record.generation and record.row["generation"] == len(
            state.history)
        if record.generation == self.generation:
            api.stop(self.run_dir)


@pytest.mark.subprocess  # tune run, beside the same run from Python
def test_a_run_from_python_writes_and_says_what_tune_run_does(tmp_path, monkeypatch, said):
    written(tmp_path / "cli")
    written(tmp_path / "python")
    done = run_tune(["run", "tiny.yaml"], tmp_path / "cli", None)
    assert done.returncode == 0, done.stderr
    monkeypatch.chdir(tmp_path / "python")
    outcome = api.run("tiny.yaml")
    run_dir = Path("outputs/tiny")
    assert outcome == api.Outcome("done", 0, run_dir, 3, "done: reached max_generations (3); "
                                  "best weights in outputs/tiny/best.yaml")
    assert timeless(said.getvalue()) == timeless(done.stderr)
    assert "on Ray:\n  tune run tiny.yaml --overwrite --workers" in said.getvalue()
    cli, python = tmp_path / "cli" / run_dir, tmp_path / "python" / run_dir
    files = sorted(p.name for p in cli.iterdir())
    assert files == sorted(p.name for p in python.iterdir())
    for name in ("config.yaml", "history.csv", "validation.csv", "best.yaml"):
        assert (cli / name).read_bytes() == (python / name).read_bytes(), name
    logs = [timeless((side / ckpt.LOG_FILE).read_text()) for side in (cli, python)]
    assert logs[0] == logs[1] == timeless(done.stderr)
    statuses = [json.loads((side / ckpt.STATUS_FILE).read_text()) for side in (cli, python)]
    for status in statuses:
        assert status["state"] == "done" and status["pid"] > 0
        for key in TIMED_STATUS:
            status.pop(key)
    assert statuses[0] == statuses[1]
    states = [asdict(ckpt.load_state(side)) for side in (cli, python)]
    asks = []
    for state in states:  # pycma's pickle keeps times too: the same strategy asks the same
        assert state.pop("seconds") > 0 and len(state.pop("cluster")) == 3
        asks.append([list(x) for x in restore_strategy(state.pop("strategy"), "fixed").ask()])
    assert states[0] == states[1] and asks[0] == asks[1]


def test_an_observer_stops_the_run_and_a_resume_ends_it_as_an_uninterrupted_run(
        tmp_path, monkeypatch, said):
    monkeypatch.chdir(tmp_path)
    written(tmp_path, "whole.yaml", output_dir="whole")
    written(tmp_path, "parts.yaml", output_dir="parts")
    run_dir = Path("parts/tiny")
    watch = StopAt(2, "parts/tiny")
    stopped = api.run("parts.yaml", observers=[watch])
    assert stopped == api.Outcome("stopped", 0, run_dir, 2, "stopped on request after "
                                  "generation 2 (checkpointed); resume with:\n  tune resume "
                                  "parts/tiny")
    assert watch.seen == [1, 2] and not (run_dir / ckpt.STOP_FILE).exists()
    status = json.loads((run_dir / ckpt.STATUS_FILE).read_text())
    assert (status["state"], status["event"]) == (
        "stopped", "stopped on request after generation 2 (tune stop)")
    assert said.getvalue().endswith(stopped.message + "\n")

    finished = api.resume(run_dir, observers=[watch])
    assert (finished.status, finished.exit_code, finished.generation) == ("done", 0, 3)
    assert watch.seen == [1, 2, 3]
    assert api.run("whole.yaml").status == "done"
    for name in ("history.csv", "validation.csv"):
        assert (run_dir / name).read_bytes() == Path("whole/tiny", name).read_bytes(), name

    again = api.resume(run_dir)
    assert (again.status, again.exit_code) == ("finished", 0)
    assert again.message.startswith("parts/tiny: the run has finished (reached "
                                    "max_generations (3)); to continue it: cp ")


def test_an_interrupted_run_says_how_to_resume_it(tmp_path, monkeypatch, said):
    class CtrlC(api.Observer):
        def generation_ended(self, record, state) -> None:
            raise KeyboardInterrupt

    monkeypatch.chdir(tmp_path)
    written(tmp_path)
    outcome = api.run("tiny.yaml", observers=[CtrlC()])
    assert outcome == api.Outcome("interrupted", 130, Path("outputs/tiny"), 1,
                                  "interrupted after generation 1 (checkpointed); resume "
                                  "with:\n  tune resume outputs/tiny")
    assert ckpt.load_state(Path("outputs/tiny")).generation == 1


def test_a_first_generation_interrupted_keeps_its_games_for_the_next_start(tmp_path, monkeypatch,
                                                                         said):
    class CtrlC(api.Observer):
        def games_played(self, count) -> None:
            raise KeyboardInterrupt  # once a unit of games has come back

    monkeypatch.chdir(tmp_path)
    written(tmp_path)
    outcome = api.run("tiny.yaml", observers=[CtrlC()])
    found = re.fullmatch(r"interrupted before the first generation completed; the (\d+) games? "
                         r"it played are kept, and starting it again plays them no more:\n"
                         r"  tune run tiny\.yaml", outcome.message)
    assert outcome.exit_code == 130 and found, outcome.message
    kept = int(found[1])
    assert kept > 0 and not Path("outputs/tiny").exists()
    assert [p.name for p in Path("outputs/.tiny.new").iterdir()] == [ckpt.KEPT_GAMES_FILE]

    assert api.run("tiny.yaml").status == "done"
    assert f"{kept} games kept from the last sitting" in said.getvalue()
    written(tmp_path, "whole.yaml", output_dir="whole")
    assert api.run("whole.yaml").status == "done"
    for name in ("history.csv", "validation.csv"):
        assert Path("outputs/tiny", name).read_bytes() == Path("whole/tiny", name).read_bytes()
    assert not Path("outputs/.tiny.new").exists()


def test_a_bad_option_from_python_is_refused_by_its_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    written(tmp_path)
    with pytest.raises(ValueError, match=r"^workers: expected an integer from 1 to "):
        api.run("tiny.yaml", workers=0)
    assert not Path("outputs").exists()


def test_open_run_reads_a_finished_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    written(tmp_path)
    run_dir = api.run("tiny.yaml").run_dir
    results = api.open_run(run_dir)
    assert results.finished and results.run_dir == run_dir
    assert results.best == read_weights(run_dir / ckpt.BEST_FILE)
    assert results.best.provenance["status"] == "validated"
    assert [row["generation"] for row in results.history] == [1.0, 2.0, 3.0]
    assert [row["candidate"] for row in results.validation] == [
        "elite 1", "elite 2", "distribution mean", "start"]
    assert results.start is results.validation[-1] and results.winner["candidate"] == \
        results.best.provenance["candidate"]
    gain = results.vs_start  # paired: the winner's own column, not the two rows' difference
    assert gain.paired and gain.value == results.winner["vs_start"]
    assert gain.stderr == results.winner["vs_start_stderr"]
    assert gain.words().endswith(", paired on the same 8 games)")
    assert results.config == ckpt.read_stored_config(run_dir)
    with pytest.raises(CheckpointError, match="no such run directory"):
        api.open_run(tmp_path / "missing")


def test_the_api_names_are_the_documented_ones():
    page = (REPO_ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    for name in api.__all__:
        assert getattr(api, name) is not None
        assert f"`{name}" in page, f"docs/api.md does not document {name}"
    assert "stable from 0.4.0" in page
    with pytest.raises(AttributeError):
        api.TuningRun  # noqa: B018 - not a name of the API


@pytest.mark.subprocess  # a fresh interpreter, to see what importing the API loads
def test_importing_the_api_loads_neither_numpy_nor_the_loop():
    code = ("import sys, tuner.api\n"
            "print(sorted(m for m in ('numpy', 'cma', 'numba', 'ray', 'tuner.loop.run') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, cwd=REPO_ROOT)
    assert done.stdout.strip() == "[]"
