"""engine.finite: weights whose heuristic is not finite, found with numpy alone, and the weight to
blame; the Solver's message names it too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import finite
from engine.echo import echo, shorten
from engine.families import BoardTerm, Family, Heuristic, HeuristicError, LineSum, Param, get_family

ROOT = Path(__file__).resolve().parents[2]
CLASSIC = get_family("classic")


def classic(**changes: float) -> np.ndarray:
    return CLASSIC.vector({**CLASSIC.defaults(), **changes})


@pytest.mark.parametrize("family", ["classic", "snake", "features", "combined"])
def test_every_built_in_family_is_finite_at_its_defaults_and_range_ends(family):
    fam = get_family(family)
    defaults = np.array([p.default for p in fam.params])
    assert finite.heuristic_problem(fam, defaults) is None
    for i, p in enumerate(fam.params):
        for value in (p.low, p.high):
            corner = defaults.copy()
            corner[i] = value
            assert finite.heuristic_problem(fam, corner) is None, (p.name, value)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"monotonicity_power": 1000.0}, "OverflowError"),  # math.pow(15, 1000)
        ({"sum_power": -1.0}, "is -inf; tables must be finite"),  # 0 ** -1
        ({"monotonicity_power": -1.0}, "is nan; tables must be finite"),  # inf - inf
        ({"monotonicity_weight": 1e308}, "is -inf; tables must be finite"),
        ({"lost_penalty": 1e308}, "values reach inf"),  # finite table, eight lines overflow
        ({"lost_penalty": 2e299}, "values reach 1.6e+300"),  # eight lines: 1.6e300 > 1e300
    ],
)
def test_non_finite_heuristics_are_found_and_the_weight_blamed(changes, problem):
    vector = classic(**changes)
    found = finite.diagnose(CLASSIC, vector)
    assert found is not None
    assert problem in found[0]
    assert found[1] == list(changes)
    [(name, value)] = changes.items()
    with pytest.raises(HeuristicError) as caught:
        finite.check_weights(CLASSIC, vector)
    assert str(caught.value).startswith(f"weights.{name}: at {value:g} the heuristic is not finite")


def test_a_value_well_inside_the_bound_is_accepted():
    assert finite.heuristic_problem(CLASSIC, classic(lost_penalty=1e290)) is None


def test_two_weights_at_fault_are_both_named():
    vector = classic(monotonicity_power=1000.0, sum_power=300.0)
    assert finite.culprits(CLASSIC, vector) == ["monotonicity_power", "sum_power"]
    with pytest.raises(HeuristicError, match=r"^weights: the heuristic is not finite .*; caused "
                                             r"by monotonicity_power = 1000 and sum_power = 300$"):
        finite.check_weights(CLASSIC, vector)


def test_weights_that_overflow_only_together_are_both_blamed():
    # each alone stays below the bound; together they overflow a float
    vector = classic(sum_power=250.0, sum_weight=1e290)
    assert finite.heuristic_problem(CLASSIC, classic(sum_power=250.0)) is None
    assert finite.heuristic_problem(CLASSIC, classic(sum_weight=1e290)) is None
    assert finite.culprits(CLASSIC, vector) == ["sum_power", "sum_weight"]


class Combiners(Family):
    """A family exercising the non-identity combiners and a board term."""

    name = "combiners"
    summary = "test family"
    params = (
        Param("exponent", 1.0, -5.0, 5.0, "power combiner's exponent"),
        Param("reciprocal", 1.0, 0.0, 10.0, "reciprocal combiner's weight"),
        Param("head", 1.0, 0.0, 10.0, "head penalty weight"),
    )

    def heuristic(self, weights):
        exponent, reciprocal, head = weights
        table = np.ones(65536)
        return Heuristic((
            LineSum("shared", (table,), combiner="power", exponent=exponent),
            LineSum("shared", (table,), combiner="reciprocal", weight=reciprocal),
            BoardTerm("head_penalty", head, values=2.0 ** np.arange(16)),
        ))


@pytest.mark.parametrize(
    ("changes", "blamed", "problem"),
    [
        ({"exponent": -30.0}, "exponent", "term 0"),  # the floor 1e-12 ** -30
        ({"reciprocal": 1e295}, "reciprocal", "term 1"),  # w / 1e-12
        ({"head": 1e295}, "head", "term 2"),  # w * (2 * 32768) ** 2
    ],
)
def test_combiners_and_board_terms_are_bounded(changes, blamed, problem):
    family = Combiners()
    assert finite.heuristic_problem(family, [1.0, 1.0, 1.0]) is None
    vector = family.vector({**family.defaults(), **changes})
    found = finite.diagnose(family, vector)
    assert found is not None and found[0].startswith(problem) and found[1] == [blamed]


def test_no_warning_reaches_the_terminal(recwarn):
    with np.errstate(all="warn"):
        assert finite.heuristic_problem(CLASSIC, classic(monotonicity_weight=1e308)) is not None
    assert len(recwarn) == 0


@pytest.mark.subprocess
def test_checking_imports_no_numba(tmp_path):
    guard = tmp_path / "numba"
    guard.mkdir()
    (guard / "__init__.py").write_text("raise ImportError('test guard: numba was imported')\n")
    code = ("from engine import finite; from engine.families import get_family; "
            "print(finite.heuristic_problem(get_family('classic'), [1, 1000, 1, 1, 1, 1, 1]))")
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "OverflowError" in done.stdout


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # numpy's, while the family builds tables
@pytest.mark.parametrize(
    ("changes", "cause"),
    [
        ({"monotonicity_power": 1000.0}, "monotonicity_power = 1000"),
        ({"monotonicity_power": -1.0}, "monotonicity_power = -1"),
    ],
)
def test_the_solver_names_the_weight_that_broke_the_heuristic(changes, cause):
    from engine.solver import Solver

    with pytest.raises(HeuristicError) as caught:
        Solver("classic", {**CLASSIC.defaults(), **changes}, depth=0)
    message = str(caught.value)
    assert message.startswith("family 'classic' at weights {")
    assert message.endswith(f"; caused by {cause}")


def test_echoed_values_are_cut_short():
    assert shorten("x" * 10) == "x" * 10
    cut = echo("y" * 1000)
    assert len(cut) == 80 and cut.startswith("'yyy") and cut.endswith("...")
