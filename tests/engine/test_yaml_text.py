"""engine.yaml_text: the YAML 1.2 core schema, and refusals of what our files never need."""

import math
import time

import pytest
import yaml

from engine import yaml_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # ints: decimal, 0o and 0x only; a leading zero is still decimal
        ("42", 42),
        ("-7", -7),
        ("+12", 12),
        ("0", 0),
        ("017", 17),  # octal 15 in YAML 1.1
        ("0o17", 15),
        ("0x1F", 31),
        # floats: a dot or an exponent (or both), and the special values
        ("1e-8", 1e-8),  # a string in YAML 1.1
        ("-2E+3", -2000.0),
        ("5e3", 5000.0),
        ("1.5e8", 1.5e8),
        ("2.5E3", 2500.0),
        ("1.e5", 1e5),
        ("1.", 1.0),
        (".5", 0.5),
        ("-.5e-3", -0.0005),
        ("1.0e-8", 1e-8),
        ("0.25", 0.25),
        ("1.0", 1.0),
        (".inf", math.inf),
        ("+.Inf", math.inf),
        ("-.inf", -math.inf),
        ("-.INF", -math.inf),
        # booleans: true and false in three spellings
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        # null: ~, null and nothing
        ("~", None),
        ("null", None),
        ("NULL", None),
        ("", None),
    ],
)
def test_core_schema_scalars(text, expected):
    value = yaml_text.load(f"x: {text}")["x"]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text", [".nan", ".NaN", ".NAN"])
def test_nan_is_a_float(text):
    value = yaml_text.load(f"x: {text}")["x"]
    assert isinstance(value, float) and math.isnan(value)


@pytest.mark.parametrize(
    "text",
    [
        "1:30",  # base 60: the integer 90 in YAML 1.1
        "1:30:00",
        "0b101",  # binary in YAML 1.1
        "1_000",  # underscores in YAML 1.1
        "1_000.5",
        "-0x1F",  # 0x and 0o take no sign
        "yes", "no", "on", "off", "y", "n", "Yes", "OFF",  # booleans in YAML 1.1
        "tRUE",
        "2026-01-02",  # a timestamp in YAML 1.1
        "<<",  # the merge key in YAML 1.1
        "=",  # the value key in YAML 1.1 (which PyYAML cannot even construct)
        "e5", "1e", ".", "0x", "nan", "inf", "1.5.2",
    ],
)
def test_what_the_core_schema_does_not_resolve_stays_a_string(text):
    assert yaml_text.load(f"x: {text}")["x"] == text


def test_the_callers_type_check_sees_the_string():
    assert yaml_text.load("games: 1:30") == {"games": "1:30"}
    assert yaml_text.load("version: 1.0") == {"version": 1.0}  # a float: callers reject it


def test_quoted_scalars_are_strings_and_the_plain_loader_is_untouched():
    assert yaml_text.load("x: '1e-8'")["x"] == "1e-8"
    assert yaml_text.load('x: "true"')["x"] == "true"
    assert yaml.safe_load("x: 1e-8")["x"] == "1e-8"  # our schema is ours alone
    assert yaml.safe_load("x: yes")["x"] is True
    assert yaml.safe_load("x: 1:30")["x"] == 90


@pytest.mark.parametrize(
    ("text", "expected"),
    [("!!int 017", 17), ("!!int 0x1F", 31), ("!!float 5", 5.0), ("!!bool TRUE", True),
     ("!!str 12", "12"), ("!!null ''", None)],
)
def test_explicit_tags_follow_the_core_schema(text, expected):
    value = yaml_text.load(f"x: {text}")["x"]
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(
    ("text", "problem"),
    [("!!int 1:30", "'1:30' is not a YAML 1.2 int"),
     ("!!int 0b101", "'0b101' is not a YAML 1.2 int"),
     ("!!float abc", "'abc' is not a YAML 1.2 float"),
     ("!!bool yes", "'yes' is not a YAML 1.2 bool"),
     ("!!merge {a: 1}", "unknown tag 'tag:yaml.org,2002:merge'"),
     ("!!python/name:os.system ''", "unknown tag 'tag:yaml.org,2002:python/name:os.system'"),
     ("!custom 1", "unknown tag '!custom'")],
)
def test_explicit_tags_cannot_bring_back_yaml_1_1_or_python_objects(text, problem):
    err = refused(f"a: 1\nx: {text}\n")
    assert err.problem == problem
    assert err.problem_mark.line + 1 == 2


def test_merge_keys_are_plain_keys():
    assert yaml_text.load("<<: {a: 1}\nb: 2") == {"<<": {"a": 1}, "b": 2}


def refused(text: str) -> yaml.MarkedYAMLError:
    """The error ``load`` raises for ``text``: a YAMLError that can name its line."""
    with pytest.raises(yaml.MarkedYAMLError) as info:
        yaml_text.load(text)
    err = info.value
    assert isinstance(err, yaml.YAMLError)
    assert err.problem and err.problem_mark is not None
    return err


@pytest.mark.parametrize(
    ("text", "key", "first", "line"),
    [
        ("run:\n  name: a\nfamily: classic\nrun:\n  name: b\n", "'run'", 1, 4),  # a section
        ("run:\n  name: a\n  seed: 1\n  name: b\n", "'name'", 2, 4),  # nested
        ("params:\n  w:\n    low: 1\n    low: 2\n", "'low'", 3, 4),  # two levels down
        ("- {a: 1, b: 2, a: 3}\n", "'a'", 1, 1),  # flow, in a list
        ("x: 1\n0x1: 2\n1: 3\n", "1", 2, 3),  # equal once read, spelled differently
        ("true: 1\nTrue: 2\n", "True", 1, 2),
    ],
)
def test_a_duplicate_key_is_refused_naming_the_key_and_its_line(text, key, first, line):
    err = refused(text)
    assert isinstance(err, yaml.constructor.ConstructorError)
    assert err.problem == f"duplicate key {key} (first on line {first})"
    assert err.problem_mark.line + 1 == line


def test_equal_looking_keys_of_different_types_are_not_duplicates():
    assert yaml_text.load("1: a\n'1': b\n") == {1: "a", "1": "b"}


def test_a_long_duplicate_key_is_cut_in_the_message():
    key = "k" * 1000  # YAML's limit for a plain key
    err = refused(f"{key}: 1\n{key}: 2\n")
    assert len(err.problem) < 2 * yaml_text.MAX_ECHO
    assert err.problem.startswith("duplicate key 'kkk") and "..." in err.problem


def block_nesting(levels: int) -> str:
    return "".join("  " * i + "a:\n" for i in range(levels - 1)) + "  " * (levels - 1) + "a: 1\n"


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ("[" * 64 + "1" + "]" * 64, 64),
        ("{a: " * 64 + "1" + "}" * 64, 64),
        (block_nesting(64), 64),
        ("- " * 64 + "1", 64),
    ],
)
def test_nesting_up_to_the_limit_loads(text, levels):
    value, depth = yaml_text.load(text), 0
    while isinstance(value, (list, dict)):
        value = value[0] if isinstance(value, list) else value["a"]
        depth += 1
    assert depth == levels == yaml_text.MAX_DEPTH


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("[" * 65 + "]" * 65, 1),
        ("[" * 500 + "]" * 500, 1),  # a RecursionError with PyYAML's own composer
        ("[" * 100_000, 1),  # unclosed too: refused before the parser reaches the end
        ("{a: " * 500 + "1" + "}" * 500, 1),
        (block_nesting(65), 65),
        (block_nesting(500), 65),
        ("- " * 500 + "1", 1),
    ],
)
def test_deeper_nesting_is_refused_with_a_short_error(text, line):
    err = refused(text)
    assert isinstance(err, yaml.composer.ComposerError)
    assert err.problem == "nesting deeper than 64 levels"
    assert err.problem_mark.line + 1 == line


def test_an_alias_is_refused():
    err = refused("a: &first 1\nb: *first\n")
    assert isinstance(err, yaml.composer.ComposerError)
    assert err.problem == "aliases (*first) are not allowed"
    assert err.problem_mark.line + 1 == 2


def test_an_alias_bomb_is_refused_at_once_with_a_short_message():
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for previous, name in zip("abcdefghi", "bcdefghij"):
        lines.append(f"{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]")
    start = time.perf_counter()
    err = refused("\n".join(lines))  # 9**10 strings if it were expanded
    assert time.perf_counter() - start < 1.0
    assert err.problem == "aliases (*a) are not allowed"
    assert len(str(err)) < 500


def test_a_long_alias_name_is_cut_in_the_message():
    name = "x" * 10_000
    err = refused(f"a: &{name} 1\nb: *{name}\n")
    assert len(err.problem) < 2 * yaml_text.MAX_ECHO


def test_an_anchor_without_an_alias_is_harmless():
    assert yaml_text.load("a: &first 1\n") == {"a": 1}


def test_invalid_yaml_raises_a_yaml_error_with_its_line():
    err = refused("x: 1\ny: [1, 2\n")
    assert isinstance(err, yaml.YAMLError)
