"""A config's ``positions`` section and the position fitnesses that read it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.positions.set_file import PositionSet, read_positions, write_positions
from tuner.config import parse_config, read_document
from tuner.errors import ConfigError

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "positions" / "classic-v1.npz"


def document(**changes) -> dict:
    config = {
        "run": {"name": "pos", "seed": 3},
        "family": "classic",
        "params": {"empty_weight": {"init": 270, "low": 10, "high": 10000, "scale": "log"},
                   "merges_weight": {"init": 700, "low": 10, "high": 10000, "scale": "log"}},
        "search": {"depth": 0},
        "evaluation": {"fitness": "regret", "games": 2},
        "positions": {"set": "set.npz"},
        "cmaes": {"popsize": 4, "max_generations": 2},
    }
    for section, values in changes.items():
        if values is None:
            config.pop(section)
        elif isinstance(values, dict) and isinstance(config.get(section), dict):
            config[section] = {**config[section], **values}
        else:
            config[section] = values
    return config


@pytest.fixture
def folder(tmp_path) -> Path:
    shutil.copy(FIXTURE, tmp_path / "set.npz")
    return tmp_path


def problems(folder: Path, **changes) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(document(**changes), "pos.yaml", folder)
    return str(caught.value).splitlines()


def test_a_position_fitness_reads_its_set_and_the_run_records_where_and_which(folder):
    outputs = {"name": "pos", "seed": 3, "output_dir": str(folder / "outputs")}
    config = parse_config(document(run=outputs), "pos.yaml", folder)
    assert (config.positions.path, config.positions.games, config.positions.positions) == (
        str(folder / "set.npz"), 2, 120)
    assert config.positions.sha256 == read_positions(FIXTURE).sha256
    assert config.validation_fitness == "mean_score"  # validation plays games
    stored = config.resolved()["positions"]
    assert stored == {"set": "../../set.npz", "sha256": config.positions.sha256}  # from outputs/pos
    scorer = config.training_player(config.player({"lost_penalty": 1.0} | {
        p.name: p.init for p in config.params}))
    assert (scorer.objective, scorer.path, scorer.player.depth) == ("regret", str(folder / "set.npz"), 0)


def test_a_run_directorys_config_finds_its_set_and_refuses_another(folder):
    outputs = {"name": "pos", "seed": 3, "output_dir": str(folder / "outputs")}
    config = parse_config(document(run=outputs), "pos.yaml", folder)
    run_dir = folder / "outputs" / "pos"
    run_dir.mkdir(parents=True)
    from tuner.config import stored_text

    (run_dir / "config.yaml").write_text(stored_text(config.resolved()))
    again = parse_config(read_document(run_dir / "config.yaml"), "config.yaml", run_dir)
    assert again.positions == config.positions
    other = read_positions(FIXTURE)
    other.seed += 1  # another set at the same path
    (folder / "set.npz").unlink()
    write_positions(folder / "set.npz", other)
    with pytest.raises(ConfigError, match=r"positions.set: '../../set.npz' is not the set this "
                                          r"run began with \(its digest is "):
        parse_config(read_document(run_dir / "config.yaml"), "config.yaml", run_dir)


@pytest.mark.parametrize("changes, problem", [
    ({"positions": None}, ("evaluation.fitness: regret scores candidates on a position set: name "
                          "one in a positions section")),
    ({"evaluation": {"fitness": "mean_score"}}, ("positions: only a position fitness reads a "
                                                "position set")),
    ({"evaluation": {"games": 3}}, "evaluation.games: 3, but the position set holds 2 games"),
    ({"evaluation": {"games": {"min": 2, "max": 4}}}, ("evaluation.games: a position fitness "
                                                      "scores a fixed number")),
    ({"evaluation": {"reevaluate_best": 1}}, ("evaluation.reevaluate_best: a position fitness "
                                             "scores each candidate once")),
    ({"positions": {"set": "missing.npz"}}, "positions.set: "),
    ({"positions": {"sets": "set.npz"}}, "positions.sets: unknown key"),
    ({"positions": "set.npz"}, "positions: expected a mapping with a set"),
])
def test_a_position_fitness_and_its_set_go_together(folder, changes, problem):
    found = problems(folder, **changes)
    assert any(line.startswith(f"pos.yaml: {problem}") for line in found), found


def test_a_damaged_or_unfinished_set_is_one_line_naming_the_key(folder):
    data = (folder / "set.npz").read_bytes()
    (folder / "set.npz").write_bytes(data[:100])
    [line] = problems(folder)
    assert line.startswith("pos.yaml: positions.set: ") and "damaged" in line
    (folder / "set.npz").unlink()
    unfinished = PositionSet.from_games({}, 1, 5, "0.1.0", read_positions(FIXTURE).labelled_games())
    write_positions(folder / "set.npz", unfinished)
    [line] = problems(folder)
    assert "holds 2 of its 5 games: finish it with the tune positions build command" in line
