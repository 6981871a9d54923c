"""Run configs (tuner.config), the normalised search space (tuner.space) and game seeds
(tuner.games.seeds)."""

from __future__ import annotations

import copy
import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from engine.families import get_family
from tuner.config import (
    RESUMABLE_CHANGES,
    SECTIONS,
    RaySection,
    ValidationSection,
    changed_keys,
    load_config,
    parse_config,
)
from tuner.errors import ConfigError
from tuner.games.seeds import TOP_BIT, training_seeds, validation_seeds
from tuner.space import SearchSpace

REPO_ROOT = Path(__file__).resolve().parents[3]
CONFIGS = sorted((REPO_ROOT / "configs").glob("*.yaml"))
QUICK = REPO_ROOT / "configs" / "quick.yaml"


def quick_document() -> dict:
    return yaml.safe_load(QUICK.read_text(encoding="utf-8"))


def problems(document: dict, source: str = "test.yaml") -> list[str]:
    """The lines of the ConfigError that ``document`` raises."""
    with pytest.raises(ConfigError) as caught:
        parse_config(document, source)
    return str(caught.value).splitlines()


def test_the_shipped_configs_are_found():
    assert {p.name for p in CONFIGS} >= {"quick.yaml", "classic.yaml", "snake.yaml"}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_shipped_config_loads(path):
    config = load_config(path)
    assert config.source == str(path)
    assert config.tuned
    assert config.cmaes.max_generations is not None or config.cmaes.max_games is not None


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_resolved_round_trips_through_parse_config(path):
    config = load_config(path)
    again = parse_config(config.resolved(), config.source)
    assert again == config
    assert again.resolved() == config.resolved()


def test_each_section_lists_its_keys_once_and_resolved_derives_from_them():
    config = load_config(QUICK)
    resolved = config.resolved()
    assert list(resolved) == ["run", "family", "params", "search", "evaluation", "cmaes", "ray",
                              "validation"]
    for section in SECTIONS:
        keys = [f.name for f in dataclasses.fields(section)]
        written = list(resolved[section.NAME])
        assert written == [k for k in keys if k in written], section.NAME  # in field order
        # left out at their defaults, which run directories written before them lack
        assert set(keys) - set(written) <= {"every", "dispatch", "start", "reference"}, \
            section.NAME


def test_a_resume_may_change_only_stop_conditions_and_ray_settings():
    assert RESUMABLE_CHANGES == (
        "cmaes.max_generations", "cmaes.max_games", "ray.address", "ray.workers",
        "ray.games_per_task", "ray.dispatch", "ray.max_retries", "ray.no_worker_timeout", "ray.connect_timeout",
    )


@pytest.mark.parametrize("reference", ["start", "classic-reference"])
def test_validation_reference_is_written_only_when_set(reference):
    document = yaml.safe_load(QUICK.read_text())  # a classic run
    assert "reference" not in load_config(QUICK).resolved()["validation"]
    document["validation"]["reference"] = reference
    config = parse_config(document, "test.yaml")
    assert config.resolved()["validation"]["reference"] == reference
    assert config.validation.reference_label == (
        "start" if reference == "start" else "baseline classic-reference")


@pytest.mark.parametrize(("reference", "message"), [
    ("seed000-snake", ("test.yaml: validation.reference: seed000-snake holds snake weights, "
                       "not the run's family (classic): name classic-reference or start")),
    ("begin", "test.yaml: validation.reference: expected one of start, classic-reference, "),
])
def test_a_reference_the_run_cannot_play_is_refused(reference, message):
    document = yaml.safe_load(QUICK.read_text())
    document["validation"]["reference"] = reference
    with pytest.raises(ConfigError) as refused:
        parse_config(document, "test.yaml")
    assert str(refused.value).startswith(message)


def test_validation_every_is_written_only_when_set():
    document = quick_document()
    assert "every" not in load_config(QUICK).resolved()["validation"]
    document["validation"]["every"] = 2
    assert parse_config(document, "test.yaml").resolved()["validation"]["every"] == 2


def test_a_section_from_values_fills_in_defaults_and_checks_as_a_config_does():
    ray = RaySection.from_values("tune play", workers=3, address=None)
    assert (ray.workers, ray.address, ray.games_per_task, ray.max_retries) == (3, None, "auto", 3)
    assert ValidationSection.from_values("test").to_config() == {"games": 500, "top_k": 3}
    with pytest.raises(ConfigError, match=r"^tune play: ray.address: expected 'auto', HOST:PORT or local, "):
        RaySection.from_values("tune play", address="nowhere")


def test_local_moves_a_run_saved_on_a_cluster_onto_this_machine():
    document = quick_document()
    document["ray"] = {"address": "10.0.0.1:6379"}
    config = parse_config(document, "test.yaml")
    here = config.with_values({"ray.address": "local"}, {"ray.address": "--address"})
    assert here.ray.address is None and here.resolved()["ray"]["address"] is None
    assert changed_keys(config.resolved(), here.resolved()) == ["ray.address"]
    assert "ray.address" in RESUMABLE_CHANGES
    document["ray"] = {"address": "local"}
    assert parse_config(document, "test.yaml").ray.address is None


def test_auto_resolved_passes_every_check_of_a_written_number():
    document = quick_document()
    document["cmaes"]["popsize"] = "auto"
    document["evaluation"]["games"] = 100_000
    config = parse_config(document, "test.yaml")  # auto gives 7 candidates at least
    assert config.with_popsize(10, 64).cmaes.popsize == 10
    with pytest.raises(ConfigError) as caught:
        config.with_popsize(11, 64)  # what auto never gives, as a check of the check
    assert str(caught.value) == ("test.yaml: cmaes.popsize (auto, resolved to 11 for 64 CPUs): "
                                 "a generation would hold 1,100,000 game results at once "
                                 "(popsize 11, times 100,000 games); at most 1,000,000: lower "
                                 "games, popsize or restarts")
    with pytest.raises(ConfigError) as caught:
        config.with_popsize(20_000, 2)
    assert str(caught.value).startswith("test.yaml: cmaes.popsize (auto, resolved to 20,000 for "
                                        "2 CPUs): expected an integer from 2 to 10000")


def test_values_given_elsewhere_pass_the_configs_own_checks_and_name_their_option():
    from engine.depth import ByBoard

    config = load_config(QUICK)
    options = {"ray.workers": "--workers", "search.depth": "--depth"}
    changed = config.with_values({"ray.workers": 2, "search.depth": "auto:cap=4"}, options)
    assert (changed.ray.workers, changed.search.depth) == (2, ByBoard(cap=4))
    assert changed_keys(config.resolved(), changed.resolved()) == ["ray.workers", "search.depth"]
    assert config.with_values({}, options) is config
    with pytest.raises(ConfigError) as caught:
        config.with_values({"ray.workers": 0, "search.depth": 6}, options)
    assert str(caught.value).splitlines() == [
        "--depth: expected an integer from 0 to 5 in a tuning run, got 6",
        "--workers: expected an integer from 1 to 4096, got 0",
    ]
    ray = config.ray.with_values({"ray.workers": 3, "search.depth": 9}, options)
    assert (ray.workers, ray.max_retries) == (3, config.ray.max_retries)  # search.depth: not its
    with pytest.raises(ConfigError, match=r"^--workers: expected an integer from 1 to 4096"):
        ray.with_values({"ray.workers": 5000}, options)


def test_a_configs_player_is_its_family_at_its_depth_and_cutoff():
    from engine.depth import NodeBudget

    config = load_config(QUICK).with_values({"search.depth": "nodes:5000"}, {})
    space = SearchSpace(config.params)
    weights = space.weights(space.initial())
    player = config.player(weights)
    assert (player.family, player.weights, player.depth, player.cutoff) == (
        "classic", weights, NodeBudget(5000), config.search.cutoff)


def test_params_left_out_are_fixed_at_the_family_default():
    config = load_config(QUICK)  # tunes 3 classic weights, fixes lost_penalty, omits 3
    classic = get_family("classic")
    assert [p.name for p in config.params] == list(classic.param_names)
    given = set(quick_document()["params"])
    for spec, param in zip(config.params, classic.params, strict=True):
        if param.name in given:
            continue
        assert not spec.tuned, spec
        assert spec.init == param.default
        assert config.resolved()["params"][param.name] == {"fixed": param.default}


def test_a_bare_number_is_a_fixed_parameter():
    document = quick_document()
    document["params"]["lost_penalty"] = 150000
    specs = {p.name: p for p in parse_config(document, "test.yaml").params}
    assert not specs["lost_penalty"].tuned
    assert specs["lost_penalty"].init == 150000.0
    assert specs["merges_weight"].tuned


def test_several_problems_are_all_reported_one_line_each():
    document = quick_document()
    document["search"]["depth"] = 9
    document["cmaes"]["popsize"] = 0
    document["ray"] = {"address": "localhost", "games_per_task": 8}
    document["params"]["merges_weight"]["low"] = math.inf
    lines = problems(document, "several.yaml")
    assert len(lines) == 4, lines
    for line, path in zip(
        lines, ["params.merges_weight.low", "search.depth", "cmaes.popsize", "ray.address"],
        strict=True,
    ):
        assert line.startswith(f"several.yaml: {path}: "), line


@pytest.mark.parametrize(
    ("section", "typo", "suggestion"),
    [
        (None, "evalution", "evaluation"),
        ("cmaes", "popsze", "popsize"),
        ("ray", "gmes_per_task", "games_per_task"),
        ("params", "merge_weight", "merges_weight"),
    ],
)
def test_an_unknown_key_suggests_the_closest_valid_name(section, typo, suggestion):
    document = quick_document()
    if section is None:
        document[typo] = document.pop(suggestion)
        path = typo
    else:
        document[section][typo] = document[section].pop(suggestion, 1)
        path = f"{section}.{typo}"
    lines = problems(document)
    [line] = [line for line in lines if f": {path}: " in line]
    assert line.startswith(f"test.yaml: {path}: unknown key")
    assert line.endswith(f"did you mean {suggestion!r}?")


def test_an_unknown_key_far_from_every_name_gets_no_suggestion():
    document = quick_document()
    document["cmaes"]["zzz"] = 1
    [line] = problems(document)
    assert line.startswith("test.yaml: cmaes.zzz: unknown key")
    assert "did you mean" not in line


def test_a_typo_in_the_family_name_suggests_the_family():
    document = quick_document()
    document["family"] = "clasic"
    [line] = problems(document)
    assert line.startswith("test.yaml: family: ")
    assert line.endswith("did you mean 'classic'?")


def test_changed_keys_finds_nested_differences():
    old = load_config(QUICK).resolved()
    new = copy.deepcopy(old)
    assert changed_keys(old, new) == []
    new["evaluation"]["games"] += 1
    new["ray"]["workers"] = 2
    new["params"]["merges_weight"]["high"] = 6000.0
    assert changed_keys(old, new) == [
        "evaluation.games", "params.merges_weight.high", "ray.workers",
    ]


def test_changed_keys_lists_added_and_removed_keys():
    old = {"a": {"b": 1}, "c": 2}
    new = {"a": {"b": 1, "d": 3}}
    assert changed_keys(old, new) == ["a.d", "c"]
    assert changed_keys(new, old) == ["a.d", "c"]


# ---- tuner.space -------------------------------------------------------------------------------

def space_config():
    """Snake with one linear and one log parameter tuned, and one fixed."""
    document = quick_document()
    document["family"] = "snake"
    document["params"] = {
        "tile_power": {"init": 1.0, "low": 0.5, "high": 2.5, "scale": "linear"},
        "empty_weight": {"init": 10.0, "low": 0.1, "high": 1000.0, "scale": "log"},
        "head_penalty": 3.0,
    }
    return parse_config(document, "space.yaml")


def test_search_space_maps_init_values_into_the_unit_box():
    space = SearchSpace(space_config().params)
    assert space.dimension == 2
    # linear: (1.0 - 0.5) / 2.0; log: 10 is two decades above 0.1 out of four
    np.testing.assert_allclose(space.initial(), [0.25, 0.5])


def test_search_space_maps_unit_vectors_back_to_weights():
    space = SearchSpace(space_config().params)
    weights = space.weights(space.initial())
    assert weights["tile_power"] == pytest.approx(1.0)
    assert weights["empty_weight"] == pytest.approx(10.0)
    corners = space.weights([0.0, 1.0])
    assert corners["tile_power"] == pytest.approx(0.5)
    assert corners["empty_weight"] == pytest.approx(1000.0)
    assert space.weights([0.5, 0.75])["empty_weight"] == pytest.approx(100.0)
    np.testing.assert_allclose(space.point(space.weights([0.3, 0.75])), [0.3, 0.75])


def test_search_space_clips_out_of_range_vectors_to_the_bounds():
    space = SearchSpace(space_config().params)
    low = space.weights([-0.7, -3.0])
    high = space.weights([1.2, 5.0])
    assert (low["tile_power"], low["empty_weight"]) == pytest.approx((0.5, 0.1))
    assert (high["tile_power"], high["empty_weight"]) == pytest.approx((2.5, 1000.0))


def test_search_space_fills_in_fixed_parameters():
    snake = get_family("snake")
    weights = SearchSpace(space_config().params).weights([0.3, 0.3])
    assert list(weights) == list(snake.param_names)
    assert weights["head_penalty"] == 3.0
    assert weights["decay"] == snake.defaults()["decay"]  # left out: the family default


def test_edge_warnings_name_each_weight_at_an_end_of_its_box():
    # tile_power linear [0.5, 2.5], empty_weight log [0.1, 1000]
    space = SearchSpace(space_config().params)
    fixed = {"head_penalty": 3.0, "decay": 0.25}
    assert space.edge_warnings({**fixed, "tile_power": 1.5, "empty_weight": 10.0}) == []
    # 0.55 is 2.5% into the linear box; 900 is 1.1% (of four decades) below the log box's top
    lines = space.edge_warnings({**fixed, "tile_power": 0.55, "empty_weight": 900.0})
    assert len(lines) == 2
    assert lines[0].startswith("tile_power = 0.55 is at the lower end of its box (0.5)")
    assert lines[1].startswith("empty_weight = 900 is at the upper end of its box (1000)")
    # 0.65 is 7.5% in: not an edge; fixed parameters are never reported
    assert space.edge_warnings({**fixed, "tile_power": 0.65, "empty_weight": 10.0}) == []
    # outside the box, even where a log scale has no value (0), is at the nearer end
    lines = space.edge_warnings({**fixed, "tile_power": 3.0, "empty_weight": 0.0})
    assert [line.split(" is at the ")[1][:5] for line in lines] == ["upper", "lower"]


# ---- tuner.games.seeds -------------------------------------------------------------------------------

def test_training_seeds_change_every_generation():
    first, second = training_seeds(7, 1, 64), training_seeds(7, 2, 64)
    assert len(first) == len(second) == 64
    assert not set(first) & set(second)


def test_training_seeds_are_a_function_of_run_seed_and_generation():
    assert training_seeds(7, 3, 32) == training_seeds(7, 3, 32)
    assert training_seeds(7, 3, 32) != training_seeds(8, 3, 32)


def test_validation_seeds_are_deterministic_and_disjoint_from_training_seeds():
    validation = validation_seeds(7, 256)
    assert validation == validation_seeds(7, 256)
    assert len(set(validation)) == 256
    assert all(s & int(TOP_BIT) for s in validation)
    training = {s for g in range(1, 9) for s in training_seeds(7, g, 256)}
    assert not any(s & int(TOP_BIT) for s in training)
    assert not training & set(validation)
    assert all(0 <= s < 2**64 for s in validation)


def test_exponents_without_a_dot_are_numbers_in_a_config_file(tmp_path):
    # plain PyYAML reads 1e1 and 5e2 as strings; a log box is where people write them
    text = QUICK.read_text(encoding="utf-8").replace(
        "merges_weight: {init: 300, low: 10, high: 5000, scale: log}",
        "merges_weight: {init: 3e2, low: 1e1, high: 5E3, scale: log}",
    )
    assert "3e2" in text
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    spec = {p.name: p for p in load_config(path).params}["merges_weight"]
    assert (spec.init, spec.low, spec.high) == (300.0, 10.0, 5000.0)


# ---- what a config may not hold ----------------------------------------------------------------

@pytest.mark.parametrize(
    ("param", "entry", "path", "message"),
    [
        ("monotonicity_power", {"fixed": 1000}, "params.monotonicity_power",
         "at 1000 the heuristic is not finite (computing it fails: OverflowError"),
        ("sum_power", -1, "params.sum_power", "at -1 the heuristic is not finite"),
        ("lost_penalty", {"init": 1, "low": 0, "high": 1e308}, "params.lost_penalty.high",
         "at 1e+308 (the others at init) the heuristic is not finite"),
        ("monotonicity_power", {"init": 4, "low": -1, "high": 8}, "params.monotonicity_power.low",
         "at -1 (the others at init) the heuristic is not finite"),
        ("lost_penalty", {"init": 0, "low": -1e308, "high": 1e308}, "params.lost_penalty",
         "the box [-1e+308, 1e+308] is too wide: its width overflows a float"),
    ],
)
def test_weights_whose_heuristic_is_not_finite_are_refused_naming_the_key(param, entry, path,
                                                                         message):
    document = quick_document()
    document["params"][param] = entry
    [line] = problems(document)
    assert line.startswith(f"test.yaml: {path}: {message}"), line


def test_a_box_checked_at_every_end_names_each_bad_end():
    document = quick_document()
    document["params"]["monotonicity_power"] = {"init": 4, "low": -1, "high": 1000}
    lines = problems(document)
    assert [line.split(": ")[1] for line in lines] == [
        "params.monotonicity_power.low", "params.monotonicity_power.high"]


@pytest.mark.parametrize("tuned", [0, 1])
def test_fewer_than_two_tuned_parameters_are_refused(tuned):
    document = quick_document()
    document["params"] = {"merges_weight": 300, "empty_weight": 100}
    if tuned:
        document["params"]["empty_weight"] = {"init": 100, "low": 10, "high": 5000}
    [line] = problems(document)
    assert line.startswith("test.yaml: params: ")
    assert "tune at least 2 parameters" in line and "pycma's CMA-ES needs 2 dimensions" in line
    assert ("only empty_weight is tuned" in line) == bool(tuned)


def test_two_tuned_parameters_are_enough():
    document = quick_document()
    del document["params"]["merges_weight"]
    assert len(parse_config(document, "test.yaml").tuned) == 2


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("evaluation", "games", 10**10),
        ("cmaes", "popsize", 10**6),
        ("cmaes", "restarts", 11),
        ("cmaes", "max_generations", 10**10),
        ("cmaes", "max_games", 10**16),
        ("ray", "workers", 10**5),
        ("ray", "games_per_task", 10**6),
        ("ray", "max_retries", 101),
        ("ray", "no_worker_timeout", 1e8),
        ("validation", "games", 10**6),
        ("validation", "top_k", 101),
    ],
)
def test_counts_have_an_upper_bound(section, key, value):
    document = quick_document()
    document.setdefault(section, {})[key] = value
    [line] = problems(document)
    assert line.startswith(f"test.yaml: {section}.{key}: expected "), line


def test_an_integer_beyond_a_float_is_a_one_line_problem():
    document = quick_document()
    document["params"]["lost_penalty"] = {"fixed": 10**400}
    [line] = problems(document)
    assert line == ("test.yaml: params.lost_penalty.fixed: expected a finite number, got an "
                    "integer of 401 digits (beyond a float's range)")


def test_floats_are_not_integers_in_a_config_file(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text(QUICK.read_text(encoding="utf-8").replace("depth: 1", "depth: 2.0"),
                    encoding="utf-8")
    with pytest.raises(ConfigError, match=r"search\.depth: expected an integer, .* got 2\.0$"):
        load_config(path)


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [("run", "name", "x/" * 3000), ("evaluation", "fitness", "z" * 3000),
     ("evaluation", "games", "g" * 3000), (None, "z" * 3000, 1)],
)
def test_bad_values_are_echoed_cut_short(section, key, value):
    document = quick_document()
    (document if section is None else document[section])[key] = value
    [line] = problems(document)
    assert len(line) < 250, line
    assert "..." in line


def test_a_missing_or_malformed_section_is_one_line():
    document = quick_document()
    del document["search"]
    document["evaluation"] = [24]
    assert problems(document) == [
        "test.yaml: search: missing section",
        "test.yaml: evaluation: expected a mapping, got list [24]",
    ]


def test_a_typo_in_a_parameter_name_is_not_also_reported_as_too_few_tuned():
    document = quick_document()
    document["params"]["merge_weight"] = document["params"].pop("merges_weight")
    [line] = problems(document)
    assert "params.merge_weight: unknown key" in line


def test_a_config_larger_than_a_mebibyte_is_not_read_whole(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * (1 << 20) + b"\n")
    with pytest.raises(ConfigError, match=r"big\.yaml: not a config file \(larger than 1024 KiB\)"):
        load_config(path)
    with pytest.raises(ConfigError, match="larger than"):
        load_config("/dev/zero")  # would never end if it were read whole


def test_search_space_refuses_nothing_a_config_accepts():
    for path in CONFIGS:
        space = SearchSpace(load_config(path).params)
        assert np.all(np.isfinite(space.initial()))
        assert all(np.isfinite(list(space.weights(np.ones(space.dimension)).values())))


# ---- search.depth: a fixed depth or a depth policy a tuning run can afford ----------------------

@pytest.mark.parametrize(
    ("written", "resolved"),
    [(3, 3), ("auto:cap=4", "auto:cap=4"), ({"auto": {"cap": 5}}, "auto:cap=5"),
     ({"nodes": 200000}, "nodes:200000"), ("nodes:5000", "nodes:5000")],
)
def test_search_depth_takes_a_policy_and_records_it_in_one_form(written, resolved):
    from engine.depth import parse_depth

    document = quick_document()
    document["search"]["depth"] = written
    config = parse_config(document, "policy.yaml")
    assert config.search.depth == parse_depth(written)
    assert config.resolved()["search"]["depth"] == resolved
    assert parse_config(config.resolved(), "again").search.depth == config.search.depth


@pytest.mark.parametrize(
    ("written", "message"),
    [
        (6, "search.depth: expected an integer from 0 to 5 in a tuning run, got 6"),
        ("auto", ("search.depth: expected the board rule capped at 5 or less in a tuning run "
                 "(e.g. auto:cap=5; uncapped, a move late in a game searches up to 14 layers: "
                 "minutes), got auto")),
        ("auto:cap=6", ("search.depth: expected the board rule capped at 5 or less in a tuning "
                       "run")),
        ({"nodes": 30_000_000}, ("search.depth: expected a node budget of at most 20,000,000 "
                                "positions a move in a tuning run (about a depth-5 move), got "
                                "30,000,000")),
        ("auto:cap=2", "search.depth: auto: cap 2 is below the floor 3"),
        ({"nodes": -1}, "search.depth: nodes: expected an integer from 1 to"),
        ({"rule": "auto"}, "search.depth: expected one key, auto or nodes, got ['rule']"),
        ("deeper", ("search.depth: expected an integer, auto, auto:cap=N (or floor=N, offset=N) "
                    "or nodes:N, got 'deeper'")),
        (None, "search.depth: missing (expected an integer, auto, auto:cap=N"),
    ],
)
def test_a_policy_a_tuning_run_cannot_use_is_refused_in_one_line(written, message):
    document = quick_document()
    document["search"]["depth"] = written
    [line] = problems(document)
    assert line.startswith(f"test.yaml: {message}"), line
