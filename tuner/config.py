"""Run configs: load a YAML file, check every key before any compute starts, fill in defaults.

Every problem found is reported as ``FILE: key.path: what was expected`` (one line each, all of
them at once); unknown keys suggest the closest valid name. ``RunConfig.resolved()`` is the
complete config with every default filled in: it is what a run directory stores and what resume
compares against.

``family`` is a spec (``engine.families.get_family``): a built-in or registered name,
``module:Class``, or ``file.py:Class`` relative to the config's directory. Naming a family imports
it: a config is as trusted as the code it names.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from engine import finite, yaml_text
from engine.families import FamilyNotFound, get_family
from engine.families.registry import canonical_spec, family_names, relative_spec
from engine.usage import MAX_WORKERS, echo, shorten
from tuner.budget import AdaptiveGames, Budget, FixedGames
from tuner.errors import ConfigError
from tuner.fitness import FITNESSES
from tuner.space import box_problem

MAX_TUNING_DEPTH = 5
MAX_CONFIG_BYTES = 1 << 20  # a config is a few kilobytes; more is not one (or /dev/zero)
# Upper bounds on counts: a typo (games: 10000000000) is refused when the config is read, not
# met as exhausted memory later (every game's result of a generation is kept until it is scored).
MAX_GAMES = 100_000  # games per candidate, and validation games per candidate
MAX_POPSIZE = 10_000
MAX_RESTARTS = 10  # each doubles the population
MAX_GENERATIONS = 10**9
MAX_TOTAL_GAMES = 10**15
MAX_GAMES_PER_TASK = 100_000
MAX_RETRIES = 100
MAX_TOP_K = 100
MAX_TIMEOUT = 1e7  # seconds (four months)
MIN_TUNED = 2  # pycma's CMA-ES needs at least two dimensions
MAX_SPEC = 256  # characters of a family spec
FITNESS_KINDS = tuple(FITNESSES)
ADAPTIVE_KEYS = ("min", "max", "batch", "confidence", "tolerance")
MIN_ADAPTIVE_GAMES = 2  # a standard error needs two games
SCALES = ("linear", "log")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
ADDRESS_PATTERN = re.compile(r"^(auto|[A-Za-z0-9.-]+:\d{1,5})$")
# Keys a resumed run may change: they decide when the run stops or where it runs, never what it
# computes.
RESUMABLE_CHANGES = (
    "cmaes.max_generations",
    "cmaes.max_games",
    "ray.address",
    "ray.workers",
    "ray.games_per_task",
    "ray.max_retries",
    "ray.no_worker_timeout",
    "ray.connect_timeout",
)


@dataclass(frozen=True)
class ParamSpec:
    """How one family parameter is treated: fixed at a value, or tuned within bounds."""

    name: str
    init: float
    low: float
    high: float
    scale: str = "linear"
    tuned: bool = True


@dataclass(frozen=True)
class RunConfig:
    """A validated run config. Field groups mirror the YAML sections."""

    source: str
    name: str
    output_dir: str
    seed: int
    family: str  # a spec; a family file's path is absolute
    params: tuple[ParamSpec, ...]
    depth: int
    cutoff: float
    budget: Budget  # evaluation.games: a number (FixedGames) or a mapping (AdaptiveGames)
    fitness: str
    tile: int
    quantile: float
    reevaluate_best: int
    sigma0: float
    popsize: int | None
    max_generations: int | None
    max_games: int | None
    restarts: int
    address: str | None
    workers: int | None
    games_per_task: int
    max_retries: int
    no_worker_timeout: float
    connect_timeout: float
    validation_games: int
    validation_top_k: int
    validation_every: int

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name

    @property
    def tuned(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.tuned)

    @property
    def fitness_options(self) -> dict[str, Any]:
        """The ``evaluation`` keys the chosen fitness reads, as keyword arguments."""
        return {name: getattr(self, name) for name in FITNESSES[self.fitness].params}

    def resolved(self) -> dict[str, Any]:
        """The complete config as a plain mapping, every default filled in."""
        params = {}
        for p in self.params:
            if p.tuned:
                params[p.name] = {"init": p.init, "low": p.low, "high": p.high, "scale": p.scale}
            else:
                params[p.name] = {"fixed": p.init}
        return {
            "run": {"name": self.name, "output_dir": self.output_dir, "seed": self.seed},
            "family": relative_spec(self.family, self.run_dir),  # stored in the run directory
            "params": params,
            "search": {"depth": self.depth, "cutoff": self.cutoff},
            "evaluation": {
                "games": self.budget.to_config(),
                "fitness": self.fitness,
                "tile": self.tile,
                "quantile": self.quantile,
                "reevaluate_best": self.reevaluate_best,
            },
            "cmaes": {
                "sigma0": self.sigma0,
                "popsize": self.popsize,
                "max_generations": self.max_generations,
                "max_games": self.max_games,
                "restarts": self.restarts,
            },
            "ray": {
                "address": self.address,
                "workers": self.workers,
                "games_per_task": self.games_per_task,
                "max_retries": self.max_retries,
                "no_worker_timeout": self.no_worker_timeout,
                "connect_timeout": self.connect_timeout,
            },
            "validation": self.validation_section(),
        }

    def validation_section(self) -> dict[str, Any]:
        section = {"games": self.validation_games, "top_k": self.validation_top_k}
        if self.validation_every:  # absent from run directories written before it existed
            section["every"] = self.validation_every
        return section


class _Checker:
    """Reads typed values out of nested mappings, collecting problems with their key paths."""

    def __init__(self, source: str):
        self.source = source
        self.problems: list[str] = []
        self.bad_sections: set[str] = set()  # reported as missing or not a mapping

    def problem(self, path: str, message: str) -> None:
        section, _, key = path.partition(".")
        if key and section in self.bad_sections:
            return  # one line for the section, not one more for each of its keys
        self.problems.append(f"{self.source}: {path}: {message}")

    def section(self, doc: dict, key: str, allowed: tuple[str, ...], required: bool = True) -> dict:
        value = doc.get(key)
        if value is None:
            if required and key not in doc:
                self.problem(key, "missing section")
                self.bad_sections.add(key)
            return {}
        if not isinstance(value, dict):
            self.problem(key, f"expected a mapping, got {_describe(value)}")
            self.bad_sections.add(key)
            return {}
        self.unknown_keys(value, allowed, key)
        return value

    def unknown_keys(self, mapping: dict, allowed: tuple[str, ...], path: str) -> None:
        for key in mapping:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                shown = shorten(str(key))
                where = f"{path}.{shown}" if path else shown
                self.problem(where, f"unknown key (expected one of: {', '.join(allowed)}){hint}")

    def integer(self, mapping, key, path, default=None, low=None, high=None, optional=False):
        value = mapping.get(key, default)
        where = f"{path}.{key}"
        if value is None:
            if not optional:
                self.problem(where, "missing (expected an integer)")
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(where, f"expected an integer, got {_describe(value)}")
            return default
        if (low is not None and value < low) or (high is not None and value > high):
            self.problem(where, f"expected an integer {_range(low, high)}, got {shorten(str(value))}")
            return default
        return value

    def number(self, mapping, key, path, default=None, low=None, high=None, open_low=False,
               open_high=False):
        value = mapping.get(key, default)
        where = f"{path}.{key}"
        if value is None:
            self.problem(where, "missing (expected a number)")
            return math.nan
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.problem(where, f"expected a number, got {_describe(value)}")
            return math.nan
        try:
            value = float(value)
        except OverflowError:
            self.problem(where, f"expected a finite number, got an integer of {len(str(value))} "
                                "digits (beyond a float's range)")
            return math.nan
        if not math.isfinite(value):
            self.problem(where, f"expected a finite number, got {value}")
            return math.nan
        too_low = low is not None and (value <= low if open_low else value < low)
        too_high = high is not None and (value >= high if open_high else value > high)
        if too_low or too_high:
            lo = f"{'>' if open_low else '>='} {low}" if low is not None else ""
            hi = f"{'<' if open_high else '<='} {high}" if high is not None else ""
            self.problem(where, f"expected a number {' and '.join(s for s in (lo, hi) if s)}, "
                                f"got {value}")
            return math.nan
        return value

    def choice(self, mapping, key, path, choices, default=None):
        value = mapping.get(key, default)
        if value not in choices:
            close = difflib.get_close_matches(str(value), choices, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            self.problem(f"{path}.{key}", f"expected one of {', '.join(choices)}, got "
                                          f"{echo(value)}{hint}")
            return default
        return value

    def text(self, mapping, key, path, default=None, pattern=None, what="a string"):
        value = mapping.get(key, default)
        where = f"{path}.{key}"
        if value is None:
            self.problem(where, f"missing (expected {what})")
            return default
        if not isinstance(value, str) or (pattern is not None and not pattern.match(value)):
            self.problem(where, f"expected {what}, got {echo(value)}")
            return default
        return value


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {echo(value)}"


def _range(low, high) -> str:
    if low is not None and high is not None:
        return f"from {low} to {high}"
    return f">= {low}" if low is not None else f"<= {high}"


def load_config(path: str | os.PathLike) -> RunConfig:
    """Read and validate a config file; raise ConfigError listing every problem.

    A family file it names is relative to the config's directory."""
    source = str(path)
    try:
        with Path(path).open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)  # never more: the path may be /dev/zero
    except OSError as err:
        raise ConfigError(f"{source}: cannot read config: {err.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: not a config file (larger than "
                          f"{MAX_CONFIG_BYTES // 1024} KiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not a config file (not UTF-8 text)") from None
    try:
        document = yaml_text.load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}: {where}: invalid YAML ({shorten(str(problem))})") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{source}: YAML: invalid YAML ({shorten(str(err))})") from None
    return parse_config(document, source, Path(path).parent)


def parse_config(document: Any, source: str, base_dir: str | os.PathLike = ".") -> RunConfig:
    """Validate an already-parsed config mapping (``source`` names it in messages; a family
    file is relative to ``base_dir``)."""
    check = _Checker(source)
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: top level: expected a mapping of sections, got "
                          f"{'an empty file' if document is None else _describe(document)}")
    sections = ("run", "family", "params", "search", "evaluation", "cmaes", "ray", "validation")
    check.unknown_keys(document, sections, "")
    run = check.section(document, "run", ("name", "output_dir", "seed"))
    name = check.text(run, "name", "run", pattern=NAME_PATTERN,
                      what="a name of letters, digits, '_', '.' or '-'")
    output_dir = check.text(run, "output_dir", "run", default="runs", what="a directory path")
    seed = check.integer(run, "seed", "run", default=0, low=0, high=2**63 - 1)

    family_spec = document.get("family")
    family = _parse_family(check, family_spec, base_dir)

    params = _parse_params(check, document.get("params"), family)

    search = check.section(document, "search", ("depth", "cutoff"))
    depth = check.integer(search, "depth", "search", low=0, high=MAX_TUNING_DEPTH)
    cutoff = check.number(search, "cutoff", "search", default=1e-4, low=0.0, high=1.0,
                          open_high=True)

    evaluation = check.section(
        document, "evaluation", ("games", "fitness", "tile", "quantile", "reevaluate_best")
    )
    budget = _parse_games(check, evaluation.get("games"))
    fitness = check.choice(evaluation, "fitness", "evaluation", FITNESS_KINDS, "mean_score")
    tile = check.integer(evaluation, "tile", "evaluation", default=2048, low=4, high=32768)
    if tile is not None and tile & (tile - 1):
        check.problem("evaluation.tile", f"expected a power of two, got {tile}")
    quantile = check.number(evaluation, "quantile", "evaluation", default=0.25, low=0.0,
                            high=1.0, open_low=True, open_high=True)
    reevaluate = check.integer(evaluation, "reevaluate_best", "evaluation", default=0, low=0,
                               high=MAX_POPSIZE)
    if reevaluate and isinstance(budget, AdaptiveGames):
        check.problem("evaluation.reevaluate_best", "not with adaptive games, which already play "
                                                    "the undecided candidates more: set it to 0")

    cmaes = check.section(
        document, "cmaes", ("sigma0", "popsize", "max_generations", "max_games", "restarts")
    )
    sigma0 = check.number(cmaes, "sigma0", "cmaes", default=0.25, low=0.0, high=1.0,
                          open_low=True)
    popsize = check.integer(cmaes, "popsize", "cmaes", low=2, high=MAX_POPSIZE, optional=True)
    max_generations = check.integer(cmaes, "max_generations", "cmaes", low=1,
                                    high=MAX_GENERATIONS, optional=True)
    max_games = check.integer(cmaes, "max_games", "cmaes", low=1, high=MAX_TOTAL_GAMES,
                              optional=True)
    restarts = check.integer(cmaes, "restarts", "cmaes", default=0, low=0, high=MAX_RESTARTS)
    if "cmaes" in document and "cmaes" not in check.bad_sections and (
            cmaes.get("max_generations") is None and cmaes.get("max_games") is None):
        check.problem("cmaes", "set max_generations or max_games (or both): a run needs an end")

    ray_section = check.section(
        document, "ray", ("address", "workers", "games_per_task", "max_retries",
                          "no_worker_timeout", "connect_timeout"), required=False
    )
    address = ray_section.get("address")
    if address is not None and (not isinstance(address, str) or not ADDRESS_PATTERN.match(address)
                                or not port_ok(address)):
        check.problem("ray.address", f"expected 'auto' or HOST:PORT, got {echo(address)}")
        address = None
    workers = check.integer(ray_section, "workers", "ray", low=1, high=MAX_WORKERS,
                            optional=True)
    games_per_task = check.integer(ray_section, "games_per_task", "ray", default=16, low=1,
                                   high=MAX_GAMES_PER_TASK)
    max_retries = check.integer(ray_section, "max_retries", "ray", default=3, low=0,
                                high=MAX_RETRIES)
    no_worker_timeout = check.number(ray_section, "no_worker_timeout", "ray", default=60.0,
                                     low=0.0, high=MAX_TIMEOUT, open_low=True)
    connect_timeout = check.number(ray_section, "connect_timeout", "ray", default=60.0,
                                   low=0.0, high=MAX_TIMEOUT, open_low=True)

    validation = check.section(document, "validation", ("games", "top_k", "every"),
                               required=False)
    validation_games = check.integer(validation, "games", "validation", default=500, low=1,
                                     high=MAX_GAMES)
    top_k = check.integer(validation, "top_k", "validation", default=3, low=1, high=MAX_TOP_K)
    every = check.integer(validation, "every", "validation", default=0, low=0,
                          high=MAX_GENERATIONS)

    if check.problems:
        raise ConfigError("\n".join(check.problems))
    return RunConfig(
        source=source, name=name, output_dir=output_dir, seed=seed,
        family=canonical_spec(family_spec, base_dir),
        params=params, depth=depth, cutoff=cutoff, budget=budget, fitness=fitness, tile=tile,
        quantile=quantile, reevaluate_best=reevaluate, sigma0=sigma0, popsize=popsize,
        max_generations=max_generations, max_games=max_games, restarts=restarts,
        address=address, workers=workers, games_per_task=games_per_task,
        max_retries=max_retries, no_worker_timeout=no_worker_timeout,
        connect_timeout=connect_timeout,
        validation_games=validation_games, validation_top_k=top_k, validation_every=every,
    )


def _parse_games(check: _Checker, raw: Any) -> Budget | None:
    """``evaluation.games``: a number of games (every candidate plays them), or a mapping
    ``{min, max, batch, confidence, tolerance}`` for adaptive games (``tuner.budget``)."""
    if not isinstance(raw, dict):
        games = check.integer({"games": raw}, "games", "evaluation", low=1, high=MAX_GAMES)
        return FixedGames(games) if games is not None else None
    path = "evaluation.games"
    check.unknown_keys(raw, ADAPTIVE_KEYS, path)
    before = len(check.problems)
    least = check.integer(raw, "min", path, low=MIN_ADAPTIVE_GAMES, high=MAX_GAMES)
    most = check.integer(raw, "max", path, low=MIN_ADAPTIVE_GAMES, high=MAX_GAMES)
    spare = most - least if least is not None and most is not None else 0
    default_batch = min(least, spare) if spare > 0 else 1  # min, or what max leaves room for
    batch = check.integer(raw, "batch", path, default=default_batch, low=1, high=MAX_GAMES)
    confidence = check.number(raw, "confidence", path, default=0.9, low=0.0, high=1.0,
                              open_low=True, open_high=True)
    tolerance = check.number(raw, "tolerance", path, default=0.1, low=0.0, high=1.0,
                             open_high=True)
    if len(check.problems) > before:
        return None
    if least >= most:
        check.problem(path, f"min ({least}) must be below max ({most}); for the same games for "
                            f"every candidate, write games: {most}")
        return None
    if batch > most - least:
        check.problem(f"{path}.batch", f"{batch} is more than max - min ({most - least}): no "
                                       f"candidate could play a whole batch more; lower batch or "
                                       f"raise max")
        return None
    return AdaptiveGames(least, most, batch, confidence, tolerance)


def _parse_family(check: _Checker, spec: Any, base_dir: str | os.PathLike):
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


def port_ok(address: str) -> bool:
    return address == "auto" or 0 < int(address.rsplit(":", 1)[1]) < 65536


def _parse_params(check: _Checker, raw: Any, family) -> tuple[ParamSpec, ...]:
    """Each family parameter: tuned ({init, low, high, scale}) or fixed (a number or {fixed})."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        check.problem("params", f"expected a mapping of parameter names, got {_describe(raw)}")
        return ()
    if family is None:
        return ()
    before = len(check.problems)  # a typo'd name too: the tuned count would be wrong
    check.unknown_keys(raw, family.param_names, "params")
    specs = []
    for param in family.params:
        path = f"params.{param.name}"
        entry = raw.get(param.name, {"fixed": param.default})
        if isinstance(entry, (int, float)) and not isinstance(entry, bool):
            entry = {"fixed": entry}
        if not isinstance(entry, dict):
            check.problem(path, f"expected a number or a mapping, got {_describe(entry)}")
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
    complete = len(specs) == len(family.params) and len(check.problems) == before
    if complete and tuned < MIN_TUNED:
        which = "no parameter is tuned" if tuned == 0 else (
            f"only {next(p.name for p in specs if p.tuned)} is tuned")
        check.problem("params", f"{which}: tune at least {MIN_TUNED} parameters, each with "
                                "{init, low, high} (pycma's CMA-ES needs 2 dimensions); to try "
                                "values of one parameter, write a weights file for each and "
                                "compare them: tune compare A.yaml B.yaml")
    if complete and tuned >= MIN_TUNED:
        _check_heuristic(check, family, specs)
    return tuple(specs)


def _check_heuristic(check: _Checker, family, specs: list[ParamSpec]) -> None:
    """The family's heuristic must be finite at the initial point and at both ends of every box
    (one tuned parameter at its low or high, the others at their initial values): 2d + 1
    points, numpy only (``engine.finite``). Weights the search cannot use would otherwise fail
    inside Ray, after compute has started."""
    init = np.array([p.init for p in specs], dtype=np.float64)
    try:
        found = finite.diagnose(family, init)
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
            except Exception as err:  # noqa: BLE001 - the family's own code may raise anything
                problem = f"the family's heuristic() failed: {type(err).__name__}: {err}"
            if problem is not None:
                check.problem(f"params.{p.name}.{end}",
                              f"at {value:g} (the others at init) the heuristic is not finite "
                              f"({shorten(problem, 300)}); narrow the box")


def changed_keys(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Key paths whose values differ between two resolved configs."""
    changed = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            changed.extend(changed_keys(a, b, f"{path}."))
        elif a != b:
            changed.append(path)
    return changed
