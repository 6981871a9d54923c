"""Every command that plays, through an external engine: ``tune run`` on Ray (a failing engine
stops the run with one line and its checkpoint kept; a rebuilt engine is refused on resume
unless said), ``tune play``, ``tune compare`` and ``tune noise`` with ``--engine`` or an engine
config, and ``tune engine defaults``. Bad input is one line and exit status 2."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
import yaml
from conftest import run_tune

from engine import read_weights
from tuner.cli.main import main
from tuner.games.seeds import training_seeds

pytestmark = pytest.mark.subprocess  # the commands start engines

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = str(ROOT / "examples" / "engines" / "python_engine.py")
BAD = str(ROOT / "tests" / "engine" / "external" / "bad_engine.py")
ENGINE = shlex.join([sys.executable, EXAMPLE])
NAME = "python-example 1.0"


def config_file(folder: Path, command: list[str], **sections) -> Path:
    config = {
        "run": {"name": "eng", "seed": 11},
        "engine": {"command": command},
        "params": {"empty_weight": {"low": 10, "high": 5000, "scale": "log"},
                   "merges_weight": {"low": 10, "high": 5000, "scale": "log"}},
        "search": {"depth": 0},
        "evaluation": {"games": 6},
        "cmaes": {"popsize": 4, "max_generations": 2},
        "validation": {"games": 6, "top_k": 1, "reference": "start"},
        **sections,
    }
    path = folder / "eng.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.slow  # an embedded Ray, twice
def test_an_engine_run_stops_in_one_line_keeps_its_checkpoint_and_resumes(tmp_path):
    doomed = tmp_path / "doomed"  # generation 2's first seed: its units crash the engine
    doomed.write_text(str(training_seeds(11, 2, 6)[0]))
    path = config_file(tmp_path, [sys.executable, BAD, "crash-on-seed", "doomed"],
                       ray={"max_retries": 1})
    done = run_tune(["--config", str(path), "--workers", "2"], tmp_path, None, timeout=600)
    assert done.returncode == 1, done.stderr
    [stopped] = [line for line in done.stderr.splitlines() if "stopped after" in line]
    assert stopped.startswith("tune: error: stopped after generation 1 (checkpointed): candidate ")
    assert ("the engine failed a unit and its retry: engine " in stopped
            and "exited with status 3" in stopped and "bad_engine: out of memory" in stopped)
    run_dir = tmp_path / "outputs" / "eng"
    assert "resume with:\n  tune resume outputs/eng --workers 2" in done.stderr
    assert len((run_dir / "history.csv").read_text().splitlines()) == 1 + 1

    doomed.write_text("")  # the engine mended: a file its command names changed
    refused = run_tune(["resume", str(run_dir)], tmp_path, None)
    assert refused.returncode == 2
    assert (f"the code of engine {NAME} changed since the run started" in refused.stderr
            and f"tune resume {run_dir} --family-changed" in refused.stderr)
    resumed = run_tune(["resume", str(run_dir), "--family-changed"], tmp_path, None, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    best = read_weights(run_dir / "best.yaml")
    assert (best.engine, best.family, best.depth) == (NAME, None, 0)
    assert best.provenance["status"] == "validated"
    report = run_tune(["report", str(run_dir)], tmp_path, None)
    assert report.returncode == 0 and f"(engine {sys.executable} {BAD} crash-on-seed doomed, " \
        "depth 0" in report.stdout
    played = run_tune(["play", "--weights", str(run_dir / "best.yaml"), "--games", "2",
                       "--engine", shlex.join([sys.executable, BAD, "crash-on-seed", "doomed"])],
                      tmp_path, None)
    assert played.returncode == 0 and f"player        engine {NAME} at depth:0" in played.stdout


def test_play_compare_and_defaults_through_an_engine(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["engine", "defaults", "--depth", "0", "-o", "defaults.yaml", "--", sys.executable,
                 EXAMPLE]) == 0
    assert capsys.readouterr().out == (f"wrote defaults.yaml: the defaults of engine '{NAME}' at "
                                       "depth:0\n")
    defaults = read_weights(tmp_path / "defaults.yaml")
    assert (defaults.engine, defaults.depth) == (NAME, 0)
    assert defaults.weights == {"empty_weight": 270.0, "merges_weight": 700.0,
                                "monotonicity_weight": 47.0}
    tuned = (tmp_path / "tuned.yaml")
    tuned.write_text((tmp_path / "defaults.yaml").read_text().replace("700.0", "100.0"))

    assert main(["play", "--engine", ENGINE, "--weights", "tuned.yaml", "--games", "3",
                 "--json"]) == 0
    summary = yaml.safe_load(capsys.readouterr().out)
    assert (summary["engine"], summary["depth"], summary["games"]) == (NAME, 0, 3)

    argv = ["compare", "tuned.yaml", "defaults.yaml", "--engine", ENGINE, "--games", "30",
            "--save", "games.json", "--json", "--workers", "1"]
    assert main(argv) == 0
    first = capsys.readouterr()
    assert "0 of 60 games reused from it, 60 played now" in first.err
    report = yaml.safe_load(first.out)
    assert [player["engine"] for player in report["players"]] == [NAME, NAME]
    assert main(argv) == 0  # the saved games count again: nothing is played
    again = capsys.readouterr()
    assert "60 of 60 games reused from it, 0 played now" in again.err
    assert yaml.safe_load(again.out) == report


def test_noise_of_an_engine_config(tmp_path, capsys):
    path = config_file(tmp_path, [sys.executable, EXAMPLE])
    assert main(["noise", "--config", str(path), "--games", "8", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"initial point of {path}: engine {NAME} at depth 0\n")
    assert "fitness (mean_score) over 8 games" in out


def test_a_dry_run_of_an_engine_config_measures_the_engine(tmp_path, capsys, monkeypatch):
    from tuner.analysis import timing

    monkeypatch.setattr(timing, "MEASURE_SECONDS", 0.0)  # one game
    path = config_file(tmp_path, [sys.executable, EXAMPLE])
    assert main(["--config", str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "game time" in out and "measured now: 1 game at the starting weights" in out
    assert not (tmp_path / "outputs").exists()


def test_an_engine_failing_its_handshake_is_one_line_and_exit_1(capsys):
    assert main(["play", "--engine", f"{sys.executable} {BAD} silent"]) == 1
    err = capsys.readouterr().err
    assert "silent': exited with status 0 (request: 'tune2048 1')" in err
    assert err.count("\n") == 1, err


@pytest.mark.parametrize(("argv", "said"), [
    (["play", "--weights", "ENGINE_FILE"],
     (f"ENGINE_FILE: holds weights of engine '{NAME}': name the command that starts it with "
     "--engine COMMAND")),
    (["compare", "ENGINE_FILE", "classic-reference"],
     f"ENGINE_FILE: holds weights of engine '{NAME}': name the command"),
    (["compare", "ENGINE_FILE", "classic-reference", "--engine", ENGINE],
     ("classic-reference: holds weights of family classic, not of an engine: play it without "
     "--engine")),
    (["play", "--engine", ENGINE, "--watch"], "--watch is not for an external engine"),
    (["play", "--engine", ENGINE, "--family", "snake"], "--family is not for an external engine"),
    (["play", "--engine", ""], "--engine needs the engine's command line"),
    (["play", "--engine", ENGINE, "--game-timeout", "0"], "--game-timeout must be a number"),
    (["play", "--engine", ENGINE, "--depth", "4"],
     f"--depth: engine '{NAME}' does not search at depth:4"),
    (["play", "--engine", "./no-such-engine"], "engine './no-such-engine': cannot start it"),
    (["export", "ENGINE_FILE", "--format", "c"],
     (f"ENGINE_FILE: holds weights of engine '{NAME}', which takes them through the engine "
     "protocol")),
    (["engine", "defaults", "-o", "ENGINE_FILE", "--", sys.executable, EXAMPLE],
     "--output: ENGINE_FILE exists; name a new file"),
])
def test_bad_input_through_an_engine_is_one_line(tmp_path, capsys, argv, said):
    engine_file = tmp_path / "e.yaml"
    engine_file.write_text(f"format: tune2048-weights\nversion: 3\nengine: {NAME}\ndepth: 0\n"
                           "weights: {empty_weight: 1.0, merges_weight: 2.0, "
                           "monotonicity_weight: 3.0}\n")
    argv = [str(engine_file) if word == "ENGINE_FILE" else word for word in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said.replace("ENGINE_FILE", str(engine_file)) in err and err.count("\n") == 1, err
