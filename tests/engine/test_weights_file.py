"""engine.weights_file: the weights file format, its validation and its atomic writes."""

import os
from pathlib import Path

import pytest
import yaml

from engine import atomic
from engine.depth import PLAYING, ByBoard, NodeBudget
from engine.families.classic import CLASSIC
from engine.families.features import FEATURES
from engine.families.snake import SNAKE
from engine.solver import Solver
from engine.weights_file import (
    FORMAT_MARKER,
    FORMAT_VERSIONS,
    WeightsFile,
    WeightsFileError,
    read_weights,
    write_weights,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
CLASSIC_REFERENCE = REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml"


def valid_document(**changes) -> dict:
    document = {
        "format": FORMAT_MARKER,
        "version": 1,
        "family": "snake",
        "depth": 2,
        "weights": dict(SNAKE.defaults()),
        "provenance": {"source": "test"},
    }
    document.update(changes)
    return document


def write_yaml(path: Path, document) -> Path:
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def read_error(path: Path) -> str:
    with pytest.raises(WeightsFileError) as info:
        read_weights(path)
    message = str(info.value)
    assert str(path) in message, "the message names the file"
    assert "\n" not in message, "one line"
    return message


def test_weights_file_error_is_a_value_error():
    assert issubclass(WeightsFileError, ValueError)


def test_the_shipped_reference_file_reads():
    loaded = read_weights(CLASSIC_REFERENCE)
    assert loaded.family == "classic"
    assert loaded.depth == 2
    assert list(loaded.weights) == list(CLASSIC.param_names)
    assert loaded.provenance["source"]


@pytest.mark.parametrize("path", sorted(REPO_ROOT.glob("runs/*/best.yaml")),
                         ids=lambda p: p.parent.name)
def test_every_shipped_result_reads_and_plays(path):
    """The campaigns' winners (and a user's runs of the examples) are public files too: they
    must keep loading; an external engine's, played in that engine, are its tests'
    (tests/tuner/cli/test_engine_commands.py)."""
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    if "engine" in document:
        loaded = read_weights(path)
        assert loaded.engine == document["engine"] and loaded.provenance["status"]
        return
    spec = document["family"]
    trusted = [path.parent / spec.rpartition(":")[0]] if ".py:" in spec else []
    loaded = read_weights(path, trusted)
    assert loaded.provenance["status"]  # validated, or in progress for a run still going
    assert Solver.from_file(path, depth=0, family_files=trusted).play(seed=1).score > 0


@pytest.mark.parametrize("family", [CLASSIC, SNAKE, FEATURES], ids=lambda f: f.name)
def test_write_then_read_round_trips(tmp_path, family):
    weights = {name: value * 1.37 + 0.1 for name, value in family.defaults().items()}
    original = WeightsFile(
        family=family.name,
        weights=weights,
        depth=3,
        provenance={"run": "abc", "generation": 12, "nested": {"sigma": 0.25}},
    )
    path = tmp_path / "w.yaml"
    write_weights(path, original)
    loaded = read_weights(path)
    assert loaded == original
    assert loaded.weights == weights  # floats survive exactly
    assert os.listdir(tmp_path) == ["w.yaml"], "no temporary file left behind"


def test_write_replaces_an_existing_file(tmp_path):
    path = tmp_path / "w.yaml"
    write_weights(path, WeightsFile("classic", CLASSIC.defaults(), 1))
    write_weights(path, WeightsFile("snake", SNAKE.defaults(), 2))
    assert read_weights(path).family == "snake"
    assert os.listdir(tmp_path) == ["w.yaml"]


def test_a_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "w.yaml"
    write_weights(path, WeightsFile("classic", CLASSIC.defaults(), 1))
    before = path.read_bytes()

    def failing_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        write_weights(path, WeightsFile("snake", SNAKE.defaults(), 2))
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["w.yaml"], "the temporary file is cleaned up"


def test_a_failed_write_of_a_new_file_creates_nothing(tmp_path, monkeypatch):
    def failing_fsync(fd):
        raise OSError("no space left")

    monkeypatch.setattr(atomic.os, "fsync", failing_fsync)
    with pytest.raises(OSError):
        write_weights(tmp_path / "w.yaml", WeightsFile("classic", CLASSIC.defaults(), 1))
    assert os.listdir(tmp_path) == []


def test_invalid_weights_are_never_written(tmp_path):
    path = tmp_path / "w.yaml"
    bad = WeightsFile("classic", {**CLASSIC.defaults(), "sum_weight": float("nan")}, 1)
    with pytest.raises(WeightsFileError, match="weights.sum_weight"):
        write_weights(path, bad)
    with pytest.raises(WeightsFileError, match="depth"):
        write_weights(path, WeightsFile("classic", CLASSIC.defaults(), PLAYING.fixed + 1))
    assert not path.exists()


def test_writing_a_weights_file_with_a_missing_parameter_is_a_value_error(tmp_path):
    weights = {k: v for k, v in CLASSIC.defaults().items() if k != "sum_weight"}
    with pytest.raises(ValueError, match="sum_weight"):
        write_weights(tmp_path / "w.yaml", WeightsFile("classic", weights, 1))


def test_writing_a_weights_file_with_an_unknown_parameter_is_refused(tmp_path):
    weights = {**CLASSIC.defaults(), "bogus": 1.0}
    with pytest.raises(ValueError, match="bogus"):
        write_weights(tmp_path / "w.yaml", WeightsFile("classic", weights, 1))


# --- read errors -----------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["format", "version", "family", "depth", "weights"])
def test_missing_field(tmp_path, field):
    document = valid_document()
    del document[field]
    message = read_error(write_yaml(tmp_path / "w.yaml", document))
    assert field in message
    assert "missing" in message


def test_provenance_is_optional(tmp_path):
    document = valid_document()
    del document["provenance"]
    assert read_weights(write_yaml(tmp_path / "w.yaml", document)).provenance == {}


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_non_finite_weight(tmp_path, value):
    path = tmp_path / "w.yaml"
    text = yaml.safe_dump(valid_document(), sort_keys=False)
    text = text.replace("decay: 0.25", f"decay: {value}")
    assert value in text
    path.write_text(text)
    message = read_error(path)
    assert "weights.decay" in message


@pytest.mark.parametrize("value", ["high", [1, 2], None, True])
def test_weight_that_is_no_number(tmp_path, value):
    weights = {**SNAKE.defaults(), "tile_power": value}
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(weights=weights)))
    assert "weights.tile_power" in message


def test_weight_too_large_for_a_float(tmp_path):
    weights = {**SNAKE.defaults(), "head_penalty": 10**400}
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(weights=weights)))
    assert "weights.head_penalty" in message


def test_unknown_family(tmp_path):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(family="snek")))
    assert "family" in message
    assert "'snek'" in message


@pytest.mark.parametrize("version", [0, 4, "1", True])
def test_wrong_version(tmp_path, version):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(version=version)))
    assert "version" in message


def test_wrong_format_marker(tmp_path):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(format="tune2048-config")))
    assert "format" in message


def test_extra_parameter(tmp_path):
    weights = {**SNAKE.defaults(), "bogus": 1.0}
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(weights=weights)))
    assert "weights.bogus" in message


def test_missing_parameter(tmp_path):
    weights = {k: v for k, v in SNAKE.defaults().items() if k != "head_penalty"}
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(weights=weights)))
    assert "weights.head_penalty" in message


def test_parameters_of_another_family(tmp_path):
    document = valid_document(weights=dict(CLASSIC.defaults()))  # family is snake
    message = read_error(write_yaml(tmp_path / "w.yaml", document))
    assert "weights." in message


def test_unknown_top_level_field(tmp_path):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(comment="hi")))
    assert "comment" in message


def test_empty_file(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("")
    assert "empty" in read_error(path)


def test_binary_garbage(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_bytes(bytes(range(256)) * 4)
    read_error(path)


def test_invalid_yaml(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("format: tune2048-weights\nweights: [1, 2\nfamily: snake\n")
    assert "YAML" in read_error(path)


def test_not_a_mapping(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("- classic\n- 2\n")
    assert "mapping" in read_error(path)


@pytest.mark.parametrize("depth", [-1, PLAYING.fixed + 1, 1.5, "2", True])
def test_depth_out_of_range(tmp_path, depth):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(depth=depth)))
    assert "depth" in message


def test_missing_file(tmp_path):
    message = read_error(tmp_path / "nope.yaml")
    assert "cannot read" in message


def test_provenance_must_be_a_mapping(tmp_path):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(provenance=[1, 2])))
    assert "provenance" in message


# --- Solver.from_file ------------------------------------------------------------------------


def test_solver_from_file_uses_the_recorded_depth_unless_given(tmp_path):
    path = tmp_path / "w.yaml"
    weights = {**SNAKE.defaults(), "decay": 0.5}
    write_weights(path, WeightsFile("snake", weights, 3))
    solver = Solver.from_file(path)
    assert solver.family is SNAKE
    assert solver.weights == weights
    assert solver.depth == 3
    assert Solver.from_file(path, depth=0).depth == 0
    assert Solver.from_file(str(path), depth=1).depth == 1


def test_solver_from_file_raises_for_a_bad_file(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text("")
    with pytest.raises(WeightsFileError, match="empty"):
        Solver.from_file(path)


def test_exponents_without_a_dot_are_numbers_in_a_weights_file(tmp_path):
    text = CLASSIC_REFERENCE.read_text(encoding="utf-8")
    # plain PyYAML reads 2e5 as a string
    path = tmp_path / "w.yaml"
    path.write_text(text.replace("lost_penalty: 200000.0", "lost_penalty: 2e5"), encoding="utf-8")
    assert "2e5" in path.read_text(encoding="utf-8")
    assert read_weights(path).weights["lost_penalty"] == 200000.0


# ---- version 2: the depth the weights were tuned at may be a policy ----------------------------

@pytest.mark.parametrize(("depth", "version", "written"),
                         [(3, 1, 3), (ByBoard(cap=6), 2, "auto:cap=6"),
                          (NodeBudget(200_000), 2, "nodes:200000")])
def test_a_file_is_version_1_unless_its_depth_is_a_policy(tmp_path, depth, version, written):
    path = tmp_path / "w.yaml"
    write_weights(path, WeightsFile("snake", dict(SNAKE.defaults()), depth, {"source": "test"}))
    document = yaml.safe_load(path.read_text())
    assert (document["version"], document["depth"]) == (version, written)
    assert version in FORMAT_VERSIONS
    assert read_weights(path).depth == depth
    assert Solver.from_file(path).depth == depth


def test_a_version_1_file_with_a_policy_says_it_needs_version_2(tmp_path):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(depth="auto")))
    assert message.endswith("w.yaml: depth: expected an integer from 0 to 8 (a depth policy "
                            "needs version 2), got 'auto'")


@pytest.mark.parametrize(("depth", "expected"),
                         [("auto:cap=1", "depth: auto: cap 1 is below the floor 3"),
                          ({"nodes": 0}, "depth: nodes: expected an integer from 1 to"),
                          (9, "depth: expected an integer from 0 to 8, got 9")])
def test_a_bad_policy_in_a_version_2_file_names_the_field(tmp_path, depth, expected):
    message = read_error(write_yaml(tmp_path / "w.yaml", valid_document(version=2, depth=depth)))
    assert expected in message


def test_version_1_files_load_as_they_always_did():
    # every shipped weights file is version 1 with an integer depth
    for path in sorted((REPO_ROOT / "engine" / "baselines").glob("*.yaml")):
        loaded = read_weights(path)
        assert isinstance(loaded.depth, int)
        assert yaml.safe_load(path.read_text())["version"] == 1


# ---- version 3: an external engine's weights -------------------------------------------------

ENGINE_WEIGHTS = {"empty_weight": 270.0, "merges_weight": 700.0}


def test_an_engines_weights_are_version_3_and_round_trip(tmp_path):
    path = tmp_path / "w.yaml"
    written = WeightsFile(None, ENGINE_WEIGHTS, NodeBudget(5000), {"run": "t"}, "my engine 2.1")
    write_weights(path, written)
    document = yaml.safe_load(path.read_text())
    assert (document["version"], document["engine"], "family" in document) == (
        3, "my engine 2.1", False)
    assert read_weights(path) == written


def test_the_version_3_fixture_loads():
    loaded = read_weights(REPO_ROOT / "tests" / "data" / "weights" / "engine-v3.yaml")
    assert (loaded.engine, loaded.family, loaded.depth) == ("c-example 1.0", None, 2)
    assert loaded.weights["monotonicity_weight"] == 51.5 and len(loaded.weights) == 7


def engine_document(**changes) -> dict:
    document = {"format": FORMAT_MARKER, "version": 3, "engine": "my engine", "depth": 2,
                "weights": dict(ENGINE_WEIGHTS)}
    document.update(changes)
    return document


@pytest.mark.parametrize(("document", "expected"), [
    ({**engine_document(), "family": "classic"},
     ("family: unknown field (expected one of format, version, engine, depth, weights, "
     "provenance); version 3 names an engine, not a family")),
    ({**valid_document(), "engine": "my engine"},
     ("engine: unknown field (expected one of format, version, family, depth, weights, "
     "provenance); only version 3 names an engine")),
    (engine_document(engine=""), "engine: expected the name the engine declares"),
    (engine_document(engine=["a"]), "engine: expected the name the engine declares"),
    (engine_document(weights={1: 2.0}), "weights: expected a mapping of parameter names"),
    (engine_document(weights={"a": "b"}), "weights.a: expected a number, got 'b'"),
    (engine_document(weights={"a": float("nan")}), "weights.a: expected a finite number"),
    (engine_document(depth="deep"), "depth: expected an integer"),
    ({k: v for k, v in engine_document().items() if k != "engine"}, "engine: missing field"),
])
def test_a_bad_version_3_file_is_one_line(tmp_path, document, expected):
    assert expected in read_error(write_yaml(tmp_path / "w.yaml", document))


def test_the_solver_refuses_an_engines_weights_in_one_line(tmp_path):
    path = tmp_path / "w.yaml"
    write_weights(path, WeightsFile(None, ENGINE_WEIGHTS, 2, {}, "my engine"))
    with pytest.raises(WeightsFileError, match=r"w.yaml: holds weights of engine 'my engine', not "
                                               r"of a family: play them in that engine"):
        Solver.from_file(path)
