"""engine.families.check: what ``tune family check`` verifies, passing and failing."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.board import parse_board_text, ranks_to_board
from engine.families import FAMILIES, Family, Heuristic, LineSum, Param, get_family, grid_lines
from engine.families.check import FamilyCheckError, check_family

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "families"


@pytest.mark.parametrize(
    "spec",
    [*FAMILIES, f"{EXAMPLES}/seed001.py:Seed001", f"{EXAMPLES}/seed003.py:Seed003"],
)
def test_built_in_and_example_families_pass(spec):
    passed = check_family(get_family(spec), boards=600)
    assert len(passed) == 4
    assert passed[0].startswith("parameters:") and "600 random boards" in passed[2]


class Empty(Family):
    """Empty cells, weighted: a correct family that the broken ones below change one thing of."""

    name = "empty"
    params = (Param("w", 1.0, 0.5, 2.0, "weight per empty cell"),)

    def heuristic(self, weights):
        empty = (np.arange(65536)[:, None] >> (4 * np.arange(4)) & 15 == 0).sum(axis=1)
        return Heuristic((LineSum("shared", (float(weights[0]) * empty.astype(float),)),))

    def reference(self, ranks, weights):
        rows, cols = grid_lines(ranks)
        return float(weights[0]) * sum(line.count(0) for line in rows + cols)


def test_the_reference_family_of_these_tests_passes():
    check_family(Empty(), boards=300)


class WrongShape(Empty):
    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.zeros(4096),)),))


class NanInsideTheRange(Empty):
    params = (Param("w", 1.0, 0.0, 2.0, "weight per empty cell"),)

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.full(65536, math.log(weights[0] - 0.5)
                                                     if weights[0] > 0.5 else math.nan),)),))


class WrongReference(Empty):
    def reference(self, ranks, weights):
        bonus = 1.0 if any(11 in row for row in ranks) else 0.0  # off whenever a 2048 is there
        return super().reference(ranks, weights) + bonus


def with_params(*params):
    return type("Custom", (Empty,), {"params": params})()


@pytest.mark.parametrize(
    ("family", "message"),
    [
        (WrongShape(), r"at weights \{w: 1\}: term 0 .*expected shape \(65536,\), got \(4096,\)"),
        (NanInsideTheRange(), r"at weights \{w: 0\.[0-4]\d*\}: term 0 .*is nan; tables must"),
        (with_params(Param("w", 1.0, -math.inf, math.inf, "x")), "must be finite numbers"),
        (with_params(Param("w", 1.0, math.nan, math.nan, "x")), "a documented range"),
        (with_params(Param("w", 1.0, 2.0, 0.5, "x")), r"needs low < high, got \[2.0, 0.5\]"),
        (with_params(Param("w", 3.0, 0.5, 2.0, "x")), r"default 3.0 is outside its range"),
        (with_params(Param("w", 1.0, 0.5, 2.0, "")), "says nothing about what it means"),
        (with_params(Param("w", 1.0, 0.5, 2.0, "x"), Param("w", 1.0, 0.5, 2.0, "y")),
         "declared twice"),
        (with_params(Param("not a name", 1.0, 0.5, 2.0, "x")), "must be an identifier"),
        (with_params(), "declares no parameters"),
    ],
)
def test_each_problem_is_named(family, message):
    with pytest.raises(FamilyCheckError, match=message):
        check_family(family, boards=300)


def test_a_reference_mismatch_shows_a_board_the_user_can_paste():
    with pytest.raises(FamilyCheckError) as err:
        check_family(WrongReference(), boards=2000)
    message = str(err.value)
    assert message.startswith("compiled value ") and "!= reference" in message
    board_text = message.split("on board ", 1)[1]
    board = parse_board_text(board_text)  # what tune play --board accepts
    ranks = [[(board >> (16 * r + 4 * c)) & 15 for c in range(4)] for r in range(4)]
    assert ranks_to_board(ranks) == board and any(11 in row for row in ranks)
