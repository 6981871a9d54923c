"""engine.families.guard: whatever a family's own code raises, wherever tune2048 calls it, is one
``FamilyCodeError`` line naming the family's file and line, what was called and what it raised."""

from __future__ import annotations

import itertools
import math
import pickle
import signal
import sys

import numpy as np
import pytest

from engine import finite
from engine.errors import BadInput
from engine.families import (
    FamilyCodeError,
    FamilyNotFound,
    HeuristicError,
    family_code,
    get_family,
)
from engine.family_check import check_family
from engine.solver import Solver

_unique = itertools.count()

# A family that misbehaves where MISBEHAVE_AT says, as MISBEHAVE_HOW says; each raising line
# carries a marker comment, so the tests know the line the message must name.
BAD = '''
import sys

from engine.families import Family, Heuristic, LineSum, Param, grid_lines, row_empty

AT = {at!r}
HOW = {how!r}


def misbehave(at):
    if at != AT:
        return
    if HOW == "exception":
        1 / 0  # RAISES exception
    if HOW == "exit":
        sys.exit(3)  # RAISES exit
    if HOW == "interrupt":
        raise KeyboardInterrupt  # RAISES interrupt
    if HOW == "multi-line":
        raise ValueError("first line\\n   second   line")  # RAISES multi-line


misbehave("import")


class Bad(Family):
    name = "bad"
    summary = "misbehaves"

    def __init__(self):
        misbehave("create")

    @property
    def params(self):
        misbehave("params")
        return (Param("w", 1.0, 0.5, 2.0, "weight per empty cell"),)

    def heuristic(self, weights):
        misbehave("heuristic")
        return Heuristic((LineSum("shared", (float(weights[0]) * row_empty(),)),))

    def reference(self, ranks, weights):
        misbehave("reference")
        rows, cols = grid_lines(ranks)
        return float(weights[0]) * sum(line.count(0) for line in rows + cols)
'''
RAISED = {
    "exception": "ZeroDivisionError: division by zero",
    "exit": "SystemExit: 3",
    "interrupt": "KeyboardInterrupt",
    "multi-line": "ValueError: first line second line",
}
ACTIONS = {"import": "importing it", "create": "creating it", "params": "reading its params"}


def bad_family(folder, at: str, how: str) -> tuple[str, int]:
    """A new file holding ``Bad`` (its own module: nothing cached), and the line that raises."""
    path = folder / f"bad_{next(_unique)}.py"
    text = BAD.format(at=at, how=how)
    path.write_text(text, encoding="utf-8")
    line = next(i for i, row in enumerate(text.splitlines(), 1) if f"# RAISES {how}" in row)
    return path.name, line


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def own_sigint_handler():
    """A SIGINT handler of one's own, as ``tune`` installs: a plain KeyboardInterrupt is then
    not the signal's."""
    previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
    yield
    signal.signal(signal.SIGINT, previous)


def expected(name: str, line: int, action: str, how: str) -> str:
    return f"{name}:{line}: in family '{name}:Bad': {action} raised {RAISED[how]}"


@pytest.mark.parametrize("how", ["exception", "exit", "multi-line"])
@pytest.mark.parametrize("at", ["import", "create", "params"])
def test_finding_a_family_whose_code_raises_is_one_line(here, at, how):
    name, line = bad_family(here, at, how)
    with pytest.raises(FamilyCodeError) as err:
        get_family(f"{name}:Bad")
    assert str(err.value) == expected(name, line, ACTIONS[at], how)
    assert isinstance(err.value, FamilyNotFound) and isinstance(err.value, BadInput)
    assert (err.value.file, err.value.line) == (name, line)


@pytest.mark.parametrize("how", ["exception", "exit", "interrupt"])
def test_building_tables_whose_code_raises_is_one_line(here, how, own_sigint_handler):
    name, line = bad_family(here, "heuristic", how)
    spec = f"{name}:Bad"
    with pytest.raises(FamilyCodeError) as err:
        Solver(spec, depth=0)
    assert str(err.value) == expected(name, line, "heuristic()", how)
    with pytest.raises(FamilyCodeError) as err:  # checking weights builds the tables too
        finite.diagnose(get_family(spec), [1.0])
    assert str(err.value) == expected(name, line, "heuristic()", how)
    with pytest.raises(FamilyCodeError) as err:
        check_family(get_family(spec), boards=10)
    assert str(err.value) == expected(name, line, "heuristic() at weights {w: 1}", how)


@pytest.mark.parametrize("how", ["exception", "exit", "interrupt"])
def test_a_reference_whose_code_raises_is_one_line(here, how, own_sigint_handler):
    name, line = bad_family(here, "reference", how)
    with pytest.raises(FamilyCodeError) as err:
        check_family(get_family(f"{name}:Bad"), boards=10)
    assert str(err.value) == expected(name, line, "reference()", how)


def test_a_keyboard_interrupt_under_python_s_own_handler_stays_an_interrupt(here):
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    name, _ = bad_family(here, "heuristic", "interrupt")
    with pytest.raises(KeyboardInterrupt) as err:
        Solver(f"{name}:Bad", depth=0)
    assert type(err.value) is KeyboardInterrupt  # as a real Ctrl-C would be


def test_an_interrupt_raised_by_tune_s_own_handler_stays_an_interrupt(own_sigint_handler):
    class Interrupted(KeyboardInterrupt):  # what tune's handler raises (tuner.interrupts)
        pass

    with pytest.raises(Interrupted), family_code("classic", "heuristic()"):
        raise Interrupted(signal.SIGINT)
    with pytest.raises(FamilyCodeError), family_code("classic", "heuristic()"):
        raise KeyboardInterrupt  # under this handler, not the signal's


def test_tune2048_s_own_errors_and_chosen_types_pass_unchanged():
    error = HeuristicError("term 0: already one line")
    with pytest.raises(HeuristicError) as err, family_code("classic", "heuristic()"):
        raise error
    assert err.value is error
    with pytest.raises(OverflowError), family_code("classic", "x", passing=(ArithmeticError,)):
        math.pow(10.0, 400)


def test_a_module_family_names_its_module_s_file(here, monkeypatch):
    name, line = bad_family(here, "heuristic", "exception")
    monkeypatch.syspath_prepend(str(here))
    module = name.removesuffix(".py")
    with pytest.raises(FamilyCodeError) as err:
        Solver(f"{module}:Bad", depth=0)
    assert str(err.value) == (f"{name}:{line}: in family '{module}:Bad': heuristic() raised "
                              f"{RAISED['exception']}")
    sys.modules.pop(module, None)


def test_a_module_family_whose_import_fails_inside_says_so(here, monkeypatch):
    (here / "needs_a_missing_module.py").write_text("import no_such_dependency_xyz\n",
                                                    encoding="utf-8")
    monkeypatch.syspath_prepend(str(here))
    with pytest.raises(FamilyCodeError) as err:
        get_family("needs_a_missing_module:Fam")
    assert str(err.value) == (
        "needs_a_missing_module.py:1: in family 'needs_a_missing_module:Fam': importing it "
        "raised ModuleNotFoundError: No module named 'no_such_dependency_xyz'")
    with pytest.raises(FamilyNotFound, match="no module named 'no_such_package_xyz' is installed"):
        get_family("no_such_package_xyz.families:Fam")


def test_arithmetic_errors_are_the_weights_fault_only_when_a_weight_is_to_blame(here):
    # classic's math.pow overflows at a huge power: the weight is named, not classic's code
    with pytest.raises(HeuristicError, match=r"computing it fails: OverflowError.*caused by "
                                             r"monotonicity_power = 1000"):
        Solver("classic", {**get_family("classic").defaults(), "monotonicity_power": 1000})
    # a division by zero at every weight is the family's own fault: its file and line
    name, line = bad_family(here, "heuristic", "exception")
    with pytest.raises(FamilyCodeError, match=f"^{name}:{line}: "):
        Solver(f"{name}:Bad", {"w": 2.0}, depth=0)


def test_a_family_code_error_crosses_processes_whole():
    error = FamilyCodeError("fam.py:3: in family 'fam.py:F': heuristic() raised X", "fam.py", 3)
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.file, copy.line) == (str(error), "fam.py", 3)


def test_a_family_instance_not_found_by_spec_is_named_by_its_class(here):
    name, line = bad_family(here, "reference", "exception")
    family = get_family(f"{name}:Bad")
    with pytest.raises(FamilyCodeError) as err, family_code(family, "reference()"):
        family.reference(np.zeros((4, 4), int).tolist(), [1.0])
    assert str(err.value).startswith(f"{name}:{line}: in family '{name}:Bad': reference() ")
