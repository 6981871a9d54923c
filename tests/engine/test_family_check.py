"""engine.family_check: what ``tune family check`` verifies, passing and failing."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from engine.board import parse_board_text, ranks_to_board
from engine.families import FAMILIES, Family, Heuristic, LineSum, Param, get_family, grid_lines
from engine.family_check import FamilyCheckError, check_family

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


# ---- heuristics that are negative everywhere are legitimate -----------------------------------

class NegativeEverywhere(Empty):
    """-1000 - w * empty per line: every table entry below 0, more empty cells worse."""

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (-1000.0 - super().heuristic(weights).terms[0]
                                             .tables[0],)),))

    def reference(self, ranks, weights):
        return -8000.0 - super().reference(ranks, weights)


class ConstantNegative(Empty):
    """-1 on every line: every board alike, so the player takes the first legal move and meets
    positions where a move loses at once (a depth-1 value of exactly 0) within a few games."""

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.full(65536, -float(weights[0])),)),))

    def reference(self, ranks, weights):
        return -8.0 * float(weights[0])


@pytest.mark.parametrize("family", [NegativeEverywhere(), ConstantNegative()],
                         ids=["minus-1000-minus-empty", "constant-minus-1"])
def test_a_heuristic_negative_everywhere_passes(family):
    passed = check_family(family, boards=300)
    assert passed[-1].startswith("search: ")


def test_a_move_worth_zero_that_does_not_lose_at_once_is_still_refused(monkeypatch):
    from engine import family_check

    monkeypatch.setattr(family_check, "_loses_at_once", lambda board, move: False)
    with pytest.raises(FamilyCheckError, match=r"a depth-1 search gives \[.*\] \(\w+ 0\.0\)"):
        check_family(ConstantNegative(), boards=300)


# ---- what a family hands back, of the wrong kind: one line each --------------------------------

class ReturnsNone(Empty):
    def heuristic(self, weights):
        return None


class ObjectTable(Empty):
    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.array(["x"] * 65536, dtype=object),)),))


class BoolTable(Empty):
    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.zeros(65536, dtype=bool),)),))


class TwoDimensionalTable(Empty):
    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.zeros((65536, 1)),)),))


class ListOfTerms(Empty):
    def heuristic(self, weights):
        return [LineSum("shared", (np.zeros(65536),))]


class ReferenceReturnsNone(Empty):
    def reference(self, ranks, weights):
        return None


class ReferenceReturnsText(Empty):
    def reference(self, ranks, weights):
        return "12"


@pytest.mark.parametrize(
    ("family", "message"),
    [
        (ReturnsNone(), r"^at weights \{w: 1\}: a family's heuristic\(\) must return a .*None$"),
        (ListOfTerms(), r"must return a Heuristic with at least one term, got \[LineSum"),
        (ObjectTable(), r"term 0 \(LineSum 'shared'\), table 0: expected a numeric dtype, got obj"),
        (BoolTable(), r"table 0: expected a numeric dtype, got bool$"),
        (TwoDimensionalTable(), r"table 0: expected shape \(65536,\), got \(65536, 1\)$"),
        (ReferenceReturnsNone(), r"^reference\(\) returned NoneType None, expected a number$"),
        (ReferenceReturnsText(), r"^reference\(\) returned str '12', expected a number$"),
    ],
)
def test_what_a_family_returns_of_the_wrong_kind_is_one_line(family, message):
    with pytest.raises(FamilyCheckError, match=message) as err:
        check_family(family, boards=30)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("w", r"params must be a tuple of engine.families.Param, got str 'w'"),
        (None, r"params must be a tuple of engine.families.Param, got NoneType None"),
        (Param("w", 1.0, 0.5, 2.0, "x"), r"params must be a tuple .*, got Param"),
        ((("w", 1.0, 0.5, 2.0, "x"),), r"params\[0\] must be an engine.families.Param, got tuple"),
        ((Param("w", "1", 0.5, 2.0, "x"),), "parameter 'w': default must be a finite number"),
        ((Param("w", 1.0, 0.5, 2.0, "x"), Param("v", 1.0, 0.5, 2.0, "y"),
          Param("w", 1.0, 0.5, 2.0, "z")), r"parameter 'w' is declared twice \(params: w, v, w\)"),
    ],
)
def test_params_the_engine_cannot_use_are_one_line(params, message):
    family = type("Custom", (Empty,), {"params": params})()
    with pytest.raises(FamilyCheckError, match=message) as err:
        check_family(family, boards=30)
    assert "\n" not in str(err.value)
