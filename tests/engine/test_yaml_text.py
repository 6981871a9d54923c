"""engine.yaml_text: YAML 1.2 exponent floats on top of PyYAML's safe loader."""

import pytest
import yaml

from engine import yaml_text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1e-8", 1e-8),  # a string under plain PyYAML
        ("-2E+3", -2000.0),
        ("5e3", 5000.0),
        ("1.0e-8", 1e-8),  # already a float in YAML 1.1
        ("0.25", 0.25),
        ("42", 42),
    ],
)
def test_numbers_load_as_numbers(text, expected):
    value = yaml_text.load(f"x: {text}")["x"]
    assert value == expected
    assert type(value) is type(expected)


def test_what_is_not_a_number_stays_a_string_and_the_plain_loader_is_untouched():
    assert yaml_text.load("x: '1e-8'")["x"] == "1e-8"  # quoted
    assert yaml_text.load("x: e5")["x"] == "e5"
    assert yaml_text.load("x: 1e")["x"] == "1e"
    assert yaml.safe_load("x: 1e-8")["x"] == "1e-8"  # the resolver is ours alone


def test_invalid_yaml_raises_a_yaml_error():
    with pytest.raises(yaml.YAMLError):
        yaml_text.load("x: [1, 2")
