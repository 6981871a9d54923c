"""Keys and values a version removed (``tuner.config.removed``): a config or a run directory that
names one is refused in one line naming the version and what to use instead, and nothing is
written."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest
import yaml
from conftest import run_tune

from tuner.config import load_config, parse_config
from tuner.config import removed as removed_module
from tuner.config.removed import REMOVED, Removed
from tuner.errors import ConfigError
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt

QUICK = Path(__file__).resolve().parents[3] / "configs" / "quick.yaml"
NOT_HARMLESS = "a value no entry keeps"


def quick(output_dir: Path | str = "runs") -> dict:
    document = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    document["run"]["output_dir"] = str(output_dir)
    return document


def naming(document: dict, key: str, value) -> dict:
    """``document`` with the key path set to ``value`` (its sections made where missing)."""
    named = copy.deepcopy(document)
    *sections, last = key.split(".")
    where = named
    for section in sections:
        where = where.setdefault(section, {})
    where[last] = value
    return named


def snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): None if p.is_dir() else p.read_bytes()
            for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("entry", REMOVED, ids=lambda e: f"{e.key}={'|'.join(map(str, e.values))}")
def test_each_removed_key_or_value_is_refused_in_one_line(entry):
    value = entry.values[-1] if entry.values else NOT_HARMLESS
    with pytest.raises(ConfigError) as refused:
        parse_config(naming(quick(), entry.key, value), "c.yaml")
    [line] = str(refused.value).splitlines()
    assert line.startswith(f"c.yaml: {entry.key}: ")
    assert f"removed in tune2048 {entry.version} ({entry.why}): {entry.instead}" in line
    assert re.fullmatch(r"\d+\.\d+\.\d+", entry.version)


def test_a_run_tuned_on_a_position_set_is_told_once_what_to_change():
    document = naming(naming(quick(), "evaluation.fitness", "regret"), "positions",
                      {"set": "sets/classic-d1.npz"})
    with pytest.raises(ConfigError) as refused:
        parse_config(document, "c.yaml")
    assert str(refused.value) == (
        "c.yaml: positions: removed in tune2048 0.4.0 (position sets did not rank candidates "
        "better than games of their cost; see CHANGELOG.md): remove the section, and set "
        "evaluation.fitness to mean_score")


def test_a_removed_value_of_a_kept_key_names_the_value_and_other_values_still_read():
    with pytest.raises(ConfigError, match=r"^c\.yaml: evaluation\.fitness: outcome_fit was "
                                          r"removed in tune2048 0\.4\.0 \(.*\): set it to "
                                          r"mean_score$"):
        parse_config(naming(quick(), "evaluation.fitness", "outcome_fit"), "c.yaml")
    assert parse_config(naming(quick(), "evaluation.fitness", "reach_rate"),
                        "c.yaml").evaluation.fitness == "reach_rate"


def test_a_removed_key_at_a_harmless_value_reads_as_if_absent(monkeypatch):
    """What every run directory of the versions before holds (the key at its old default)
    still resumes; any other value is refused, and the caller's document is left as it was."""
    entry = Removed("evaluation.retired", "0.4.0", "it did nothing useful", "remove it",
                    harmless=(0,))
    monkeypatch.setattr(removed_module, "REMOVED", (*REMOVED, entry))
    document = naming(quick(), "evaluation.retired", 0)
    assert parse_config(document, "c.yaml").resolved() == parse_config(quick(), "c.yaml").resolved()
    assert document["evaluation"]["retired"] == 0
    with pytest.raises(ConfigError, match=r"^c\.yaml: evaluation\.retired: removed in tune2048 "
                                          r"0\.4\.0 \(it did nothing useful\): remove it$"):
        parse_config(naming(quick(), "evaluation.retired", 2), "c.yaml")


@pytest.mark.parametrize("argv", [["run", "c.yaml", "--dry-run"], ["run", "c.yaml"],
                                  ["--config", "c.yaml"]])
def test_tune_run_refuses_a_removed_fitness_and_writes_nothing(tmp_path, no_ray, argv):
    _written(tmp_path / "c.yaml", naming(quick(), "evaluation.fitness", "agreement"))
    before = snapshot(tmp_path)

    result = run_tune(argv, tmp_path, no_ray)

    assert result.returncode == 2, result.stderr
    assert result.stderr == ("tune: error: c.yaml: evaluation.fitness: agreement was removed in "
                             "tune2048 0.4.0 (position sets did not rank candidates better than "
                             "games of their cost; see CHANGELOG.md): set it to mean_score\n")
    assert snapshot(tmp_path) == before


def test_resuming_a_run_directory_tuned_on_a_position_set_is_refused(tmp_path, no_ray):
    """A run of an earlier version whose config.yaml and checkpoint name a position set and a
    position fitness: ``tune resume`` and ``tune report`` refuse it in one line, and write
    nothing."""
    config = load_config(_written(tmp_path / "c.yaml", quick(tmp_path / "runs")))
    config.run_dir.mkdir(parents=True)
    state = TuningRun.start(config, config.run_dir, progress=False).state
    state.config = naming(naming(state.config, "evaluation.fitness", "regret"), "positions",
                          {"set": "../../sets/classic-d1.npz", "sha256": "0" * 64})
    ckpt.write_config(config.run_dir, state.config)
    ckpt.save_state(config.run_dir, state)
    before = snapshot(tmp_path)

    for argv in (["resume", "runs/quick"], ["--resume", "runs/quick", "--workers", "1"],
                 ["report", "runs/quick"]):
        result = run_tune(argv, tmp_path, no_ray)
        assert result.returncode == 2, result.stderr
        [line] = result.stderr.splitlines()
        assert line.startswith("tune: error: runs/quick/config.yaml: ")
        assert ("positions: removed in tune2048 0.4.0 (position sets did not rank candidates "
                "better than games of their cost; see CHANGELOG.md): remove the section") in line
    assert snapshot(tmp_path) == before


def _written(path: Path, document: dict) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path
