"""Families from outside the package through the tuner: configs, run directories, the examples
tuned end to end, the ``families`` and ``family check`` commands, and cheap config reading."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import run_tune

from engine import Solver, read_weights
from tuner.config import load_config, parse_config
from tuner.games.evaluation import SerialEvaluator
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "families"


def tune(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return run_tune(list(args), cwd, None, timeout=600)


def fresh_tune(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """``tune ARGS`` in a new interpreter: what it imports from its start."""
    return subprocess.run([sys.executable, "-m", "tuner", *args], cwd=cwd, check=False,
                          capture_output=True, text=True, timeout=600, env={**os.environ, **env})


def copy_examples(tmp_path: Path) -> Path:
    """The examples folder, copied to a directory of its own (configs keep their relative paths)."""
    return Path(shutil.copytree(EXAMPLES, tmp_path / "examples", ignore=shutil.ignore_patterns(
        "__pycache__")))


def short(config_path: Path, tmp_path: Path, name: str) -> Path:
    """A copy of an example config beside it, cut to a short run whose outputs go to tmp_path."""
    doc = yaml.safe_load(config_path.read_text())
    doc["run"].update(name=name, output_dir=str(tmp_path / "runs"))
    doc["search"]["depth"] = 0
    doc["evaluation"]["games"] = 6
    doc["cmaes"].update(popsize=4, max_generations=2)
    doc["validation"] = {"games": 8, "top_k": 1}
    path = config_path.with_name(f"{name}.yaml")
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_a_config_names_a_family_file_relative_to_itself(tmp_path):
    examples = copy_examples(tmp_path)
    config = load_config(examples / "seed003.yaml")
    assert config.family == f"{examples / 'seed003.py'}:Seed003"
    stored = config.resolved()
    assert stored["family"] == os.path.relpath(examples / "seed003.py", config.run_dir) + \
        ":Seed003"
    # the stored config, read from the run directory, names the same file
    again = parse_config(stored, "stored", config.run_dir)
    assert again.family == config.family and again.resolved() == stored


@pytest.mark.subprocess
def test_a_bad_family_spec_in_a_config_is_one_line(tmp_path):
    doc = yaml.safe_load((EXAMPLES / "seed001.yaml").read_text())
    doc["family"] = "seed001.py:Seed01"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    done = tune("--config", str(path), cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        f"tune: error: {path}: family: family file {tmp_path / 'seed001.py'} not found"]


@pytest.mark.parametrize("example", ["seed001", "seed003"])
def test_each_example_is_tuned_end_to_end(tmp_path, example):
    examples = copy_examples(tmp_path)
    config = load_config(short(examples / f"{example}.yaml", tmp_path, f"{example}-short"))
    run = TuningRun.start(config, config.run_dir, progress=False)
    state = run.run(SerialEvaluator(3))
    assert state.finished and 1 <= state.generation <= 2  # pycma may stop a flat search early
    assert len((config.run_dir / ckpt.HISTORY_FILE).read_text().splitlines()) == \
        1 + state.generation
    best_path = config.run_dir / ckpt.BEST_FILE
    text = best_path.read_text()
    assert f"family: ../../examples/{example}.py:" in text  # relative to the run directory
    best = read_weights(best_path, family_files=[examples / f"{example}.py"])
    assert best.provenance["status"] == "validated"
    result = Solver.from_file(best_path, family_files=[examples / f"{example}.py"]).play(seed=1)
    assert result.moves > 10


@pytest.mark.parametrize("name", ["json.py", "my-family.py"])
def test_a_config_names_a_family_file_of_any_name(tmp_path, name):
    """A standard module's name, or one that is no module name: the file is imported under a
    private name (docs/families.md, "The name of a family file")."""
    examples = copy_examples(tmp_path)
    (examples / "seed003.py").rename(examples / name)
    doc = yaml.safe_load((examples / "seed003.yaml").read_text())
    doc["family"] = f"{name}:Seed003"
    (examples / "seed003.yaml").write_text(yaml.safe_dump(doc))
    config = load_config(short(examples / "seed003.yaml", tmp_path, "odd-name"))
    assert config.family == f"{examples / name}:Seed003"
    state = TuningRun.start(config, config.run_dir, progress=False).run(SerialEvaluator(3))
    assert state.finished
    best_path = config.run_dir / ckpt.BEST_FILE
    assert f"family: ../../examples/{name}:Seed003" in best_path.read_text()
    assert Solver.from_file(best_path, family_files=[examples / name]).play(seed=1).moves > 10


@pytest.mark.ray
def test_the_cli_tunes_a_family_file_on_ray_and_plays_it_only_when_named(tmp_path):
    examples = copy_examples(tmp_path)
    config = short(examples / "seed003.yaml", tmp_path, "seed003-cli")
    done = tune("--config", str(config), "--workers", "2", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    best = tmp_path / "runs" / "seed003-cli" / "best.yaml"
    refused = tune("play", "--weights", str(best), "--games", "1", "--depth", "0", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "add --family-file examples/seed003.py" in refused.stderr
    played = tune("play", "--weights", str(best), "--games", "1", "--depth", "0",
                  "--family-file", "examples/seed003.py", cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "player        seed003 at depth 0" in played.stdout
    reference = str(ROOT / "engine" / "baselines" / "classic-reference.yaml")
    compared = tune("compare", str(best), reference, "--games",
                    "30", "--depth", "0", "--workers", "2", "--family-file",
                    "examples/seed003.py", "--json", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert [p["family"] for p in yaml.safe_load(compared.stdout)["players"]] == ["seed003",
                                                                                "classic"]


@pytest.mark.subprocess
def test_tune_families_lists_every_family_with_its_parameters(tmp_path):
    done = tune("families", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for name in ("classic", "snake", "features", "combined"):
        assert f"{name}  (built-in): " in done.stdout
    assert "monotonicity_power" in done.stdout and "range [0.5, 8]" in done.stdout
    as_json = tune("families", "--json", cwd=tmp_path)
    listed = yaml.safe_load(as_json.stdout)  # JSON is YAML
    assert listed["snake"]["params"][0] == {"name": "decay", "default": 0.25, "low": 0.01,
                                            "high": 1.0, "doc": listed["snake"]["params"][0]["doc"]}


@pytest.mark.subprocess
def test_tune_family_check_passes_an_example_and_refuses_a_broken_family(tmp_path):
    done = tune("family", "check", "examples/families/seed003.py:Seed003", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("  ok  ") == 4 and "10,000 random boards" in done.stdout
    broken = tmp_path / "broken.py"
    broken.write_text((EXAMPLES / "seed003.py").read_text().replace(
        "+ combine(\"reciprocal\", gaps, smooth_w)", "+ 2 * combine(\"reciprocal\", gaps, smooth_w)"))
    refused = tune("family", "check", "broken.py:Seed003", "--boards", "200", cwd=tmp_path)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("tune: error: broken.py:Seed003: compiled value ")
    assert "on board " in line


NUMBA_GUARD = """\
import os, sys
sys.stderr.write("test guard: numba was imported\\n")
os._exit(99)
"""


@pytest.mark.subprocess
def test_reading_configs_imports_no_numba(tmp_path):
    guard = tmp_path / "guard"
    (guard / "numba").mkdir(parents=True)
    (guard / "numba" / "__init__.py").write_text(NUMBA_GUARD)
    env = {"PYTHONPATH": os.pathsep.join([str(guard), str(ROOT)])}
    imported = subprocess.run([sys.executable, "-c", "import tuner.config, tuner.cli.main"],
                              env={**os.environ, **env}, capture_output=True, text=True,
                              check=False)
    assert imported.returncode == 0, imported.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text("run: {name: x}\nfamily: clasic\n")
    refused = fresh_tune("--config", str(bad), cwd=tmp_path, env=env)
    assert refused.returncode == 2 and "did you mean 'classic'?" in refused.stderr
    good = fresh_tune("--config", str(ROOT / "configs" / "quick.yaml"), cwd=tmp_path, env=env)
    assert good.returncode == 99, "the run itself does import the engine"
