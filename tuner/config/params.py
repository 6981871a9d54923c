"""A run config's family and its parameters: the family imported by its spec, each parameter's
box read, and the heuristic checked finite at the initial point and at the box's ends."""

from __future__ import annotations

import difflib
import math
import os
from typing import Any

import numpy as np

from engine import finite
from engine.echo import echo, shorten
from engine.families import FamilyCodeError, FamilyNotFound, get_family
from engine.families.registry import family_names
from tuner.checker import Checker, describe
from tuner.config.limits import MAX_SPEC, MIN_TUNED, SCALES
from tuner.space import ParamSpec, box_problem


def parse_family(check: Checker, spec: Any, base_dir: str | os.PathLike):
    """The family a config names, or None after reporting why there is none."""

    if isinstance(spec, str) and spec and len(spec) <= MAX_SPEC:
        try:
            return get_family(spec, base_dir)
        except FamilyNotFound as err:
            if ":" in spec or spec in family_names():  # the error says what is missing
                check.problem("family", str(err))
                return None
    names = family_names()
    close = difflib.get_close_matches(str(spec), names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    check.problem("family", f"expected one of {', '.join(names)} (or module:Class, "
                            f"file.py:Class), got {echo(spec)}{hint}")
    return None


def parse_params(check: Checker, raw: Any, family) -> tuple[ParamSpec, ...]:
    """Each family parameter: tuned ({init, low, high, scale}) or fixed (a number or {fixed});
    the heuristic checked finite where the tuning may take it."""
    specs = read_params(check, raw, family.params if family is not None else None)
    if specs and sum(p.tuned for p in specs) >= MIN_TUNED and len(specs) == len(family.params):
        _check_heuristic(check, family, list(specs))
    return specs


def read_params(check: Checker, raw: Any, declared) -> tuple[ParamSpec, ...]:
    """Each declared parameter (a family's or an external engine's: a name, a default and
    optional bounds): tuned ({init, low, high, scale}) or fixed (a number or {fixed}); a bound
    the declaration leaves out must be written."""

    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        check.problem("params", f"expected a mapping of parameter names, got {describe(raw)}")
        return ()
    if declared is None:
        return ()
    before = len(check.problems)  # a typo'd name too: the tuned count would be wrong
    check.unknown_keys(raw, tuple(param.name for param in declared), "params")
    specs = []
    for param in declared:
        path = f"params.{param.name}"
        entry = raw.get(param.name, {"fixed": param.default})
        if isinstance(entry, (int, float)) and not isinstance(entry, bool):
            entry = {"fixed": entry}
        if not isinstance(entry, dict):
            check.problem(path, f"expected a number or a mapping, got {describe(entry)}")
            continue
        if "fixed" in entry:
            check.unknown_keys(entry, ("fixed",), path)
            value = check.number(entry, "fixed", path)
            specs.append(ParamSpec(param.name, value, value, value, "linear", tuned=False))
            continue
        check.unknown_keys(entry, ("init", "low", "high", "scale"), path)
        init = check.number(entry, "init", path, default=param.default)
        low = check.number(entry, "low", path, default=param.low)
        high = check.number(entry, "high", path, default=param.high)
        scale = check.choice(entry, "scale", path, SCALES, "linear")
        if not (math.isnan(low) or math.isnan(high)):
            if low >= high:
                check.problem(path, f"low ({low}) must be below high ({high})")
            elif not math.isnan(init) and not low <= init <= high:
                check.problem(f"{path}.init", f"expected a value within [{low}, {high}], "
                                              f"got {init}")
            if scale == "log" and low <= 0:
                check.problem(f"{path}.low", f"a log-scale parameter needs low > 0, got {low}")
            elif low < high and (problem := box_problem(low, high, scale)):
                check.problem(path, problem)
        specs.append(ParamSpec(param.name, init, low, high, scale, tuned=True))
    tuned = sum(p.tuned for p in specs)
    complete = len(specs) == len(declared) and len(check.problems) == before
    if complete and tuned < MIN_TUNED:
        which = "no parameter is tuned" if tuned == 0 else (
            f"only {next(p.name for p in specs if p.tuned)} is tuned")
        check.problem("params", f"{which}: tune at least {MIN_TUNED} parameters, each with "
                                "{init, low, high} (pycma's CMA-ES needs 2 dimensions); to try "
                                "values of one parameter, write a weights file for each and "
                                "compare them: tune compare A.yaml B.yaml")
    return tuple(specs) if len(check.problems) == before else ()


def _check_heuristic(check: Checker, family, specs: list[ParamSpec]) -> None:
    """The family's heuristic must be finite at the initial point and at both ends of every box
    (one tuned parameter at its low or high, the others at their initial values): 2d + 1
    points, numpy only (``engine.finite``). Weights the search cannot use would otherwise fail
    inside Ray, after compute has started."""
    init = np.array([p.init for p in specs], dtype=np.float64)
    try:
        found = finite.diagnose(family, init)
    except FamilyCodeError as err:  # names the family's file and line already
        check.problem("params", str(err))
        return
    except Exception as err:  # noqa: BLE001 - the family's own code may raise anything
        check.problem("params", f"the family's heuristic() failed at the initial point: "
                                f"{type(err).__name__}: {shorten(str(err))}")
        return
    if found is not None:
        problem, blamed = found
        check.problem(*finite.weights_message(family, init, problem, blamed, "params"))
        return
    for i, p in enumerate(specs):
        if not p.tuned:
            continue
        for end, value in (("low", p.low), ("high", p.high)):
            corner = init.copy()
            corner[i] = value
            try:
                problem = finite.heuristic_problem(family, corner)
            except FamilyCodeError as err:
                check.problem(f"params.{p.name}.{end}", str(err))
                continue
            except Exception as err:  # noqa: BLE001 - the family's own code may raise anything
                problem = f"the family's heuristic() failed: {type(err).__name__}: {err}"
            if problem is not None:
                check.problem(f"params.{p.name}.{end}",
                              f"at {value:g} (the others at init) the heuristic is not finite "
                              f"({shorten(problem, 300)}); narrow the box")
