"""A path stored in a run directory (a ``file.py:Class`` family, an engine's ``cwd``) leads to
the same place however the run is resumed: from any working directory, and with ``--config`` a
copy of its ``config.yaml`` in any folder, or a config whose paths are relative to its own
folder. The instruction ``tune resume`` prints for a finished run works when followed literally.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tuner.api.resumed import edited_config
from tuner.cli.main import main
from tuner.config import changed_keys, load_config
from tuner.store import checkpoint as ckpt

ROOT = Path(__file__).resolve().parents[3]
INSTRUCTION = re.compile(r"to continue it: (?P<copy>.+), raise cmaes\.max_generations or "
                         r"cmaes\.max_games in (?P<edit>\S+), and run: (?P<resume>.+)$")


def family_project(root: Path) -> Path:
    """A project whose config (``configs/run.yaml``) names a family file in ``families/``."""
    (root / "families").mkdir(parents=True)
    shutil.copyfile(ROOT / "examples" / "families" / "seed001.py",
                    root / "families" / "seed001.py")
    document = yaml.safe_load((ROOT / "examples" / "families" / "seed001.yaml").read_text())
    document["family"] = "../families/seed001.py:Seed001"
    return write_config(root, document)


def engine_project(root: Path) -> Path:
    """A project whose config (``configs/run.yaml``) runs the Python example engine from
    ``engines/``."""
    (root / "engines").mkdir(parents=True)
    shutil.copyfile(ROOT / "examples" / "engines" / "python_engine.py",
                    root / "engines" / "python_engine.py")
    document = {
        "run": {"name": "py", "seed": 3},
        "engine": {"command": [sys.executable, "python_engine.py"], "cwd": "../engines"},
        "params": {"empty_weight": {"init": 270, "low": 10, "high": 5000, "scale": "log"},
                   "merges_weight": {"low": 10, "high": 5000}, "monotonicity_weight": 47},
    }
    return write_config(root, document)


def write_config(root: Path, document: dict) -> Path:
    """``configs/run.yaml`` in ``root``: ``document``, small, its runs in ``outputs``, relative to
    where tune is started."""
    document["run"]["output_dir"] = "outputs"
    document["search"] = {"depth": 0}
    document["evaluation"] = {"games": 1}
    document["cmaes"] = {"popsize": 4, "max_generations": 1}
    document["validation"] = {"games": 2, "top_k": 1}
    (root / "configs").mkdir()
    path = root / "configs" / "run.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def finished_run(config_path: Path, capsys) -> Path:
    """The config's run, one generation played in this process (``tune run``), started from
    the working directory."""
    assert main(["run", str(config_path), "--quiet"]) == 0
    capsys.readouterr()
    return load_config(config_path).run_dir.absolute()


@pytest.fixture(autouse=True)
def games_here(monkeypatch):
    """Every run's games in this process, not on a Ray: an engine's games have no price before
    it has played, so a run of one would start Ray."""
    import tuner.cluster.ray_evaluator

    monkeypatch.setattr(tuner.cluster.ray_evaluator, "plays_here", lambda *a, **k: True)


def stored_paths(run_dir: Path) -> dict:
    stored = ckpt.read_stored_config(run_dir)
    return {"family": stored.get("family"), "cwd": stored.get("engine", {}).get("cwd")}


def elsewhere(tmp_path: Path, monkeypatch) -> Path:
    """A working directory deeper than the project's, with nothing of it inside."""
    folder = tmp_path / "elsewhere" / "a" / "b"
    folder.mkdir(parents=True)
    monkeypatch.chdir(folder)
    return folder


def follow_the_instruction(run_dir: Path, capsys) -> None:
    """Resume the finished run, and do what it says, word for word: copy, raise
    cmaes.max_generations by one in the copy, resume with it."""
    assert main(["resume", str(run_dir)]) == 0
    message = capsys.readouterr().out.strip()
    found = INSTRUCTION.search(message)
    assert found, message
    subprocess.run(shlex.split(found["copy"]), check=True)
    edited = Path(found["edit"])
    text = edited.read_text()
    assert "max_generations: 1\n" in text
    edited.write_text(text.replace("max_generations: 1\n", "max_generations: 2\n"))
    words = shlex.split(found["resume"])
    assert words[0] == "tune"
    assert main(words[1:] + ["--quiet"]) == 0


@pytest.mark.subprocess
@pytest.mark.parametrize("project", [family_project, engine_project], ids=["family", "engine"])
def test_the_instruction_for_a_finished_run_works_when_followed_literally_from_elsewhere(
        tmp_path, monkeypatch, capsys, project):
    monkeypatch.chdir(tmp_path)
    run_dir = finished_run(project(tmp_path), capsys)
    before = stored_paths(run_dir)
    elsewhere(tmp_path, monkeypatch)

    follow_the_instruction(run_dir, capsys)

    assert len(ckpt.load_state(run_dir).history) == 2
    assert stored_paths(run_dir) == before  # still relative to the run directory
    assert ckpt.read_stored_config(run_dir)["cmaes"]["max_generations"] == 2
    assert main(["resume", str(run_dir)]) == 0  # finished again, its paths still good
    assert "the run has finished" in capsys.readouterr().out


def test_a_config_relative_to_its_folder_or_written_as_the_runs_leads_to_the_runs_places(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    original = family_project(tmp_path / "project")
    run_dir = finished_run(original, capsys)
    stored = ckpt.read_stored_config(run_dir)
    here = elsewhere(tmp_path, monkeypatch)
    copy = here / "copy.yaml"
    shutil.copyfile(run_dir / ckpt.CONFIG_FILE, copy)
    for path in (original, copy, run_dir / ckpt.CONFIG_FILE):
        edited = edited_config(path, stored, run_dir)
        assert edited.family == f"{tmp_path}/project/families/seed001.py:Seed001"
        assert changed_keys(stored, edited.resolved()) == [], path


@pytest.mark.parametrize("where", ["absolute", "relative to the copy"])
def test_a_family_file_elsewhere_is_refused_naming_both_places(tmp_path, monkeypatch, capsys,
                                                               where):
    monkeypatch.chdir(tmp_path)
    run_dir = finished_run(family_project(tmp_path / "project"), capsys)
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(tmp_path / "project" / "families" / "seed001.py", other / "seed001.py")
    edited = yaml.safe_load((run_dir / ckpt.CONFIG_FILE).read_text())
    edited["family"] = (f"{other}/seed001.py:Seed001" if where == "absolute"
                        else "../other/seed001.py:Seed001")
    (tmp_path / "copies").mkdir()
    path = tmp_path / "copies" / "edited.yaml"
    path.write_text(yaml.safe_dump(edited, sort_keys=False))
    before = {p: p.read_bytes() for p in run_dir.iterdir() if p.name != "run.log"}

    assert main(["resume", str(run_dir), "--config", str(path)]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"tune: error: {path}: cannot resume {run_dir} with a changed family "
                           f"(the run's '{tmp_path}/project/families/seed001.py:Seed001', here "
                           f"'{other}/seed001.py:Seed001') (a path in {path} is relative to its "
                           f"folder, or written as {run_dir / ckpt.CONFIG_FILE} writes it)"), line
    assert before == {p: p.read_bytes() for p in run_dir.iterdir() if p.name != "run.log"}


@pytest.mark.subprocess
def test_an_engine_cwd_elsewhere_is_refused_naming_both_places(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run_dir = finished_run(engine_project(tmp_path), capsys)
    shutil.copytree(tmp_path / "engines", tmp_path / "other-engines")
    here = elsewhere(tmp_path, monkeypatch)
    edited = yaml.safe_load((run_dir / ckpt.CONFIG_FILE).read_text())
    edited["engine"]["cwd"] = str(tmp_path / "other-engines")
    (here / "edited.yaml").write_text(yaml.safe_dump(edited, sort_keys=False))

    assert main(["resume", str(run_dir), "--config", "edited.yaml"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert (f"with a changed engine.cwd (the run's '{tmp_path}/engines', here "
            f"'{tmp_path}/other-engines') (a path in edited.yaml is relative to its folder"
            ) in line, line
