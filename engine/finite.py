"""Whether a family's heuristic stays finite at given weights, checked with numpy alone, and which
weight is to blame when it does not.

The search adds up to eight line lookups per term, scales them by the term's weight, averages
over spawns and compares moves. A table entry that is inf or NaN (a power of 1000 overflows, a
negative power of an empty cell is 1/0) makes those values meaningless, and so do entries that
are finite but so large that a board's sum overflows (a linear weight of 1e308). The workspace
(``engine.workspace.check``) refuses non-finite tables when a ``Solver`` is built; this module
checks the same and the size of a board's value, without importing numba, so that a config can
be checked when it is read and a weights file before any game starts.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from engine.families import family_code, get_family
from engine.families.base import Family
from engine.families.guard import family_code_error
from engine.heuristic import COMBINER_FLOOR, BoardTerm, HeuristicError, LineSum, combine

# The largest |value| a board may take: far below float64's 1.8e308, so that the search's sums
# and averages of values cannot overflow.
MAX_MAGNITUDE = 1e300
LINES = 8  # a line sum looks up at most 8 lines (4 rows and 4 columns)
MAX_TILE_VALUE = 32768.0

Problem = Callable[[Family, np.ndarray], "str | None"]


def heuristic_problem(family: Family, vector: Sequence[float]) -> str | None:
    """Why the search cannot use ``family``'s heuristic at ``vector``; None when it can.

    Reports a heuristic that cannot be built for arithmetic reasons (``math.pow`` overflows), a
    non-finite table entry, weight, exponent or per-rank value, and values too large to add up.
    The shape of the terms (known layouts, combiners, board terms) is left to the workspace.

    Raises:
        FamilyCodeError: the family's ``heuristic()`` raised anything else.
    """
    return _problem(family, vector)[0]


def _problem(family: Family, vector: Sequence[float]) -> tuple[str | None, ArithmeticError | None]:
    """``heuristic_problem``, and the arithmetic error behind it if there was one."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the problem is reported below, not as a warning
        try:
            with family_code(family, "heuristic()", passing=(ArithmeticError,)):
                heuristic = family.heuristic(np.asarray(vector, dtype=np.float64))
        except (ArithmeticError, HeuristicError) as err:
            arithmetic = err if isinstance(err, ArithmeticError) else None
            return f"computing it fails: {type(err).__name__}: {err}", arithmetic
        return terms_problem(heuristic), None


def terms_problem(heuristic) -> str | None:
    """Why the search cannot use these terms' values (see ``heuristic_problem``); None if it can."""
    terms = getattr(heuristic, "terms", None)
    if not isinstance(terms, (tuple, list)):
        return None  # not a Heuristic: engine.workspace.check says so
    total = 0.0
    for i, term in enumerate(terms):
        try:
            where, reach = _checked_size(i, term)
        except HeuristicError as err:
            return str(err)
        if not reach <= MAX_MAGNITUDE:  # also true for NaN
            return (f"{where}: values reach {reach:.3g}, beyond the {MAX_MAGNITUDE:g} a board's "
                    "value may take")
        total += reach
    if not total <= MAX_MAGNITUDE:
        return (f"the terms add up to {total:.3g}, beyond the {MAX_MAGNITUDE:g} a board's value "
                "may take")
    return None


def _checked_size(i: int, term) -> tuple[str, float]:
    """Where a term is, for messages, and a bound on |its value| over every board; raises
    ``HeuristicError`` for a non-finite table entry, weight, exponent or per-rank value."""
    if isinstance(term, LineSum):
        where = f"term {i} (LineSum {term.layout!r})"
        if not isinstance(term.tables, (tuple, list)):
            return where, 0.0  # engine.workspace.check reports the layout
        term.check(where, len(term.tables))
        return where, _line_sum_size(term)
    if isinstance(term, BoardTerm):
        where = f"term {i} (BoardTerm {term.name!r})"
        term.check(where)
        return where, _board_term_size(term)
    return f"term {i}", 0.0  # engine.workspace.check reports what it is


def _line_sum_size(term: LineSum) -> float:
    """A bound on |the term's value| over every board."""
    largest = max((float(np.max(np.abs(t))) for t in term.tables), default=0.0)
    aggregate = LINES * largest
    weight = abs(float(term.weight))
    if term.combiner in ("identity", "per_tile"):
        return weight * aggregate
    # log2, reciprocal and power are monotonic in the floored aggregate: its ends bound them
    ends = []
    for a in (COMBINER_FLOOR, max(aggregate, COMBINER_FLOOR)):
        try:
            ends.append(abs(combine(term.combiner, a, 1.0, float(term.exponent), tiles=1)))
        except OverflowError:
            ends.append(math.inf)
    return weight * max(ends)


def _board_term_size(term: BoardTerm) -> float:
    """A bound on |the term's value|: a head penalty squares a difference of two per-rank values,
    the others take one, or the mean tile value (at most 32768)."""
    largest = max(float(np.max(np.abs(term.rank_values()))), 1.0)
    return abs(float(term.weight)) * max(4.0 * largest * largest, MAX_TILE_VALUE)


def culprits(family: Family, vector: Sequence[float],
             problem: Problem = heuristic_problem) -> list[str]:
    """The parameters to blame for a heuristic the search cannot use.

    Those whose reset to the family default alone makes it usable; when no single reset does
    (several weights are at fault), those that make it unusable on their own, the others at
    their defaults. Empty when neither finds one (or the defaults themselves are unusable).
    """
    names = family.param_names
    given = np.asarray(vector, dtype=np.float64)
    defaults = np.array([p.default for p in family.params], dtype=np.float64)
    changed = [i for i in range(len(names)) if given[i] != defaults[i]]

    def usable(trial: np.ndarray) -> bool:
        try:
            return problem(family, trial) is None
        except Exception:  # noqa: BLE001 - a family's code may raise anything: not usable
            return False

    blamed = []
    for i in changed:
        trial = given.copy()
        trial[i] = defaults[i]
        if usable(trial):
            blamed.append(i)
    if not blamed and usable(defaults):
        for i in changed:
            trial = defaults.copy()
            trial[i] = given[i]
            if not usable(trial):
                blamed.append(i)
    return [names[i] for i in blamed]


def blame(family: Family, vector: Sequence[float], problem: Problem = heuristic_problem) -> str:
    """``"; caused by NAME = VALUE"`` for the culprits (see ``culprits``), or ``""``."""
    return caused_by(family, vector, culprits(family, vector, problem))


def caused_by(family: Family, vector: Sequence[float], names: Sequence[str]) -> str:
    """``"; caused by NAME = VALUE and ..."`` for ``names``, or ``""`` when there are none."""
    named = family.named(vector)
    if not names:
        return ""
    return "; caused by " + " and ".join(f"{name} = {named[name]:g}" for name in names)


def diagnose(family: Family, vector: Sequence[float]) -> tuple[str, list[str]] | None:
    """None when the search can use the heuristic at ``vector``; else what is wrong and the
    parameters to blame (see ``culprits``).

    Raises:
        FamilyCodeError: the family's ``heuristic()`` raised, other than an arithmetic error
            that some weight is to blame for (``math.pow`` overflowing at a huge power): a
            division by zero at every weight is a bug in its code, named by file and line.
    """
    problem, arithmetic = _problem(family, vector)
    if problem is None:
        return None
    blamed = culprits(family, vector)
    if arithmetic is not None and not blamed:
        raise family_code_error(family, "heuristic()", arithmetic) from arithmetic
    return problem, blamed


def weights_message(family: Family, vector: Sequence[float], problem: str,
                    blamed: Sequence[str], prefix: str) -> tuple[str, str]:
    """(key path, what is wrong) for a heuristic that is not finite: ``PREFIX.NAME`` and ``at
    VALUE the heuristic is not finite (PROBLEM)`` for one culprit (``PREFIX`` is where the
    weights are, e.g. ``weights``); ``PREFIX`` and the culprits listed for several or none."""
    named = family.named(vector)
    if len(blamed) == 1:
        return (f"{prefix}.{blamed[0]}",
                f"at {named[blamed[0]]:g} the heuristic is not finite ({problem})")
    return prefix, f"the heuristic is not finite ({problem}){caused_by(family, vector, blamed)}"


def check_weights(family: Family, vector: Sequence[float], prefix: str = "weights") -> None:
    """Raise ``HeuristicError`` saying what is not finite and which weight causes it, the
    weights named by their key path under ``prefix``."""
    found = diagnose(family, vector)
    if found is not None:
        raise HeuristicError(": ".join(weights_message(family, vector, *found, prefix)))


def check_weights_from(source: str, spec: str, weights: Mapping[str, float]) -> None:
    """Refuse weights read from ``source`` (a file, an option) whose heuristic is not finite,
    before any game is played (in a worker it would be a traceback): ``SOURCE: weights.NAME: at
    VALUE the heuristic is not finite ...``."""
    family = get_family(spec)
    try:
        check_weights(family, family.vector(weights))
    except HeuristicError as err:
        raise HeuristicError(f"{source}: {err}") from None
