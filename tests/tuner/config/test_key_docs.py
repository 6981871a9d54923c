"""docs/config.md's "Every key" is the one reference for a config's keys: its tables list exactly
the keys the loader accepts, with the loader's defaults and the keys a resume may change.

The loader's own list is asked of the loader: a config with an unknown key in every mapping is
refused with the keys each mapping accepts (``unknown key (expected one of: ...)``), so the list
follows the code wherever it declares a key (a section's fields, a strategy's ``keys``, the engine
section, a parameter's entry)."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from engine import yaml_text
from tuner.config import RESUMABLE_CHANGES, parse_config
from tuner.errors import ConfigError
from tuner.strategies import STRATEGIES

CONFIG_DOC = Path(__file__).resolve().parents[3] / "docs" / "config.md"
PROBE = "zz_probe"  # a key no mapping accepts
PARAM = "params.<name>"  # how the docs write a parameter's entry
# The least a config says: every other key takes its default
MINIMAL = {
    "run": {"name": "keys"},
    "family": "classic",
    "params": {"sum_power": {"init": 3.5, "low": 1.0, "high": 6.0},
               "merges_weight": {"init": 700, "low": 10, "high": 10000, "scale": "log"}},
    "search": {"depth": 1},
    "evaluation": {"games": 8},
    "cmaes": {"max_generations": 1},
}
SECTIONS = ("run", "search", "evaluation", "cmaes", "ray", "validation")
REFUSED = re.compile(rf"^probe\.yaml: (?P<path>\S*?){PROBE}: unknown key "
                     r"\(expected one of: (?P<keys>[^)]*)\)")


def accepted(document: dict) -> dict[str, tuple[str, ...]]:
    """The keys the loader accepts in each mapping of ``document`` that holds ``PROBE``, by the
    mapping's path ("" for the top level), as its refusal names them."""
    with pytest.raises(ConfigError) as refused:
        parse_config(document, "probe.yaml")
    return {found["path"].rstrip("."): tuple(found["keys"].split(", "))
            for line in str(refused.value).splitlines() if (found := REFUSED.match(line))}


def probed_family() -> dict:
    document = copy.deepcopy(MINIMAL)
    document[PROBE] = 1
    for section in SECTIONS:
        document.setdefault(section, {})[PROBE] = 1
    document["evaluation"]["games"] = {"min": 8, "max": 16, PROBE: 1}
    document["params"]["sum_power"][PROBE] = 1
    document["params"]["lost_penalty"] = {"fixed": 200000, PROBE: 1}
    return document


def probed_engine() -> dict:
    document = {key: value for key, value in MINIMAL.items() if key not in ("family", "params")}
    document["engine"] = {"command": ["true"], PROBE: 1}
    return document


def probed_strategy(name: str) -> dict:
    return {**MINIMAL, "strategy": {"name": name, PROBE: 1}}


def strategy_keys() -> dict[str, tuple[str, ...]]:
    """Each strategy's keys of the ``strategy`` section, as the loader accepts them."""
    return {name: accepted(probed_strategy(name))["strategy"] for name in STRATEGIES}


def config_keys() -> set[str]:
    """Every key path the loader accepts (a parameter's entry as ``params.<name>``)."""
    mappings = {**accepted(probed_family()), **accepted(probed_engine())}
    expected = {"", *SECTIONS, "evaluation.games", "params.sum_power", "params.lost_penalty",
                "engine"}
    assert set(mappings) == expected, "a probe found no mapping: is the config valid otherwise?"
    mappings["strategy"] = tuple({key for keys in strategy_keys().values() for key in keys})
    sections = {path.split(".")[0] for path in mappings if path} | {"params"}
    assert set(mappings[""]) - sections == {"family"}, (
        "a new top-level key: probe it here if it is a mapping, as the sections are")
    keys = set()
    for path, names in mappings.items():
        prefix = PARAM if path.startswith("params.") else path
        keys |= {f"{prefix}.{name}" if prefix else name for name in names}
    return keys - sections


def documented() -> dict[str, list[str]]:
    """The rows of docs/config.md's "Every key", by their key: values, default, what it does,
    on resume."""
    text = CONFIG_DOC.read_text(encoding="utf-8")
    start = text.index("\n## Every key\n")
    end = text.find("\n## ", start + 1)
    rows = {}
    for line in text[start:end if end != -1 else None].splitlines():
        if found := re.match(r"^\| `([^`]+)` \|", line):
            cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
            assert found[1] not in rows, f"{found[1]} is documented twice"
            assert len(cells) == 5, f"{found[1]}: expected 5 cells, got {len(cells)}"
            rows[found[1]] = cells[1:]
    return rows


def flattened(mapping: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in mapping.items():
        if isinstance(value, dict):
            flat.update(flattened(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def test_the_docs_list_every_key_the_loader_accepts_and_no_other():
    keys, rows = config_keys(), set(documented())
    assert not keys - rows, f"keys missing from docs/config.md's tables: {sorted(keys - rows)}"
    assert not rows - keys, f"documented keys the loader refuses: {sorted(rows - keys)}"


def test_the_keys_documented_as_changing_on_resume_are_those_a_resume_may_change():
    rows = documented()
    assert {row[3] for row in rows.values()} == {"may change", "fixed"}
    changing = {key for key, row in rows.items() if row[3] == "may change"}
    assert changing == set(RESUMABLE_CHANGES), (
        f"documented as changing: {sorted(changing)}; a resume may change "
        f"{sorted(RESUMABLE_CHANGES)}")


def test_the_documented_defaults_are_those_the_loader_fills_in():
    written = flattened(MINIMAL)
    defaults = {key: value for key, value in flattened(
        parse_config(copy.deepcopy(MINIMAL), "minimal.yaml").resolved()).items()
        if key not in written and not key.startswith(("params.", "family"))}
    assert "cmaes.sigma0" in defaults and "ray.max_retries" in defaults
    rows = documented()
    for key, value in defaults.items():
        cell = rows[key][1]
        shown = re.fullmatch(r"`([^`]+)`", cell)
        assert shown, f"{key}: its default should be one value in backquotes, got {cell!r}"
        assert yaml_text.load(shown[1]) == value, f"{key}: documented {cell}, loaded {value!r}"


def test_a_strategy_key_names_the_strategies_that_read_it():
    rows = documented()
    by_strategy = strategy_keys()
    common = set.intersection(*(set(keys) for keys in by_strategy.values()))
    for key in {key for keys in by_strategy.values() for key in keys} - common:
        readers = {name for name, keys in by_strategy.items() if key in keys}
        named = set(re.findall(r"`([^`]+)`", rows[f"strategy.{key}"][0])) & set(STRATEGIES)
        assert named == readers, f"strategy.{key}: read by {sorted(readers)}, names {sorted(named)}"
