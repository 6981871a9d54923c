"""Every resume command a message prints is built by one function (``tuner.commands.resume``),
from the options the job was given: the job's own lines, ``tune status`` and ``tune stop`` (which
read them from ``status.json``), and each refusal that says how to resume. A job given
``--address local`` (its games in this process: the runs here are too small for Ray) or an edited
config is told to resume with them, wherever the command is printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tuner import api
from tuner.api.launch import RESUME, RUN, Launch
from tuner.cli.main import main
from tuner.config import parse_config
from tuner.errors import CheckpointError, ConfigError
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt
from tuner.store.run_dir import NewRun, resume_a_copy


def tiny(output_dir: Path, generations: int = 2) -> dict:
    """A run of about a second, played in this process."""
    return {
        "run": {"name": "tiny", "output_dir": str(output_dir), "seed": 3},
        "family": "classic",
        "params": {"merges_weight": {"init": 300, "low": 10, "high": 5000, "scale": "log"},
                   "empty_weight": {"init": 100, "low": 10, "high": 5000, "scale": "log"}},
        "search": {"depth": 0},
        "evaluation": {"games": 2},
        "cmaes": {"popsize": 4, "max_generations": generations},
        "validation": {"games": 2, "top_k": 1},
    }


def write(path: Path, document: dict) -> Path:
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    return path


class StopAfter(api.Observer):
    """Asks for a stop (``tune stop``) once generation 1 is checkpointed."""

    def __init__(self, run_dir: Path):
        self.run_dir = run_dir

    def generation_ended(self, record, state) -> None:
        api.stop(self.run_dir)


def test_launch_options_make_the_one_resume_command():
    edited = Launch.of(RESUME, "edited.yaml", family_changed=True, workers=1, address="local")
    assert edited.resume_command(Path("my run")) == (
        "tune resume 'my run' --config edited.yaml --family-changed --workers 1 --address local")
    assert edited.resume_command(Path("r"), address="h:1").endswith("--workers 1 --address h:1")
    started = Launch.of(RUN, "c.yaml", overwrite=True, workers=2)  # its config is the run's own
    assert started.resume_command(Path("r")) == "tune resume r --workers 2"
    assert started.start_again(Path("r"), address="local") == (
        "tune run c.yaml --overwrite --workers 2 --address local")


def test_the_job_tune_status_and_tune_stop_say_the_same_resume_command(tmp_path, capsys,
                                                                       monkeypatch):
    config = write(tmp_path / "tiny.yaml", tiny(tmp_path / "outputs"))
    run_dir = tmp_path / "outputs" / "tiny"
    stopped = api.run(config, address="local", observers=[StopAfter(run_dir)])
    command = f"tune resume {run_dir} --address local"
    assert stopped.status == "stopped" and stopped.message.endswith(f"\n  {command}")
    assert main(["status", str(run_dir)]) == 3
    assert f"  resume with: {command}\n" in capsys.readouterr().out

    edited = write(tmp_path / "edited.yaml", tiny(tmp_path / "outputs", generations=3))
    monkeypatch.chdir(tmp_path)
    again = api.resume(run_dir, config="edited.yaml", address="local",
                       observers=[StopAfter(run_dir)])
    assert again.message.endswith(
        f"\n  tune resume {run_dir} --config edited.yaml --address local")
    kept = json.loads((run_dir / ckpt.STATUS_FILE).read_text())["resume"]
    assert kept == {"config": str(edited), "family_changed": False, "workers": None,
                    "address": "local"}  # its path made absolute: tune status runs anywhere
    assert main(["status", str(run_dir)]) == 3
    assert f"resume with: tune resume {run_dir} --config {edited} --address local\n" in (
        capsys.readouterr().out)

    monkeypatch.setattr("tuner.cli.stop.request_stop", lambda run_dir: (run_dir, 4242))
    assert main(["stop", str(run_dir)]) == 0
    assert f"(tune resume {run_dir} --config {edited} --address local)" in (
        capsys.readouterr().out)


def test_refusals_of_a_resume_say_how_to_resume_with_the_same_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = write(tmp_path / "tiny.yaml", tiny(Path("outputs"), generations=1))
    run_dir = Path("outputs/tiny")
    assert api.run(config, address="local").status == "done"

    finished = api.resume(run_dir, address="local")
    assert finished.status == "finished" and finished.message.endswith(
        "and run: tune resume outputs/tiny --config edited.yaml --address local")

    changed = tiny(Path("outputs"), generations=1)
    changed["search"]["depth"] = 1
    with pytest.raises(ConfigError, match=r"resume it with its own settings: tune resume "
                                          r"outputs/tiny --address local$"):
        api.resume(run_dir, config=write(tmp_path / "changed.yaml", changed), address="local")

    stored, state = ckpt.read_stored_config(run_dir), ckpt.load_state(run_dir)
    parsed = parse_config(stored, "config.yaml", run_dir, run_dir=run_dir)
    state.family_digest = "0" * 64  # its family's code edited since it started
    with pytest.raises(CheckpointError, match=r"anyway: tune resume outputs/tiny "
                                              r"--family-changed --address local$"):
        TuningRun.resume(parsed, run_dir, state, progress=False, resume={"address": "local"})

    with pytest.raises(CheckpointError, match=r"already holds a run; resume it with: tune "
                                              r"resume outputs/tiny --address local$"):
        NewRun(run_dir, overwrite=False, same_config=True, resume={"address": "local"})
    assert resume_a_copy(run_dir, {"workers": 2}).endswith(
        "cp -r outputs/tiny outputs/tiny-2 && tune resume outputs/tiny-2 --workers 2")
