"""Run configs: load a YAML file, check every key before any compute starts, fill in defaults.

Every problem found is reported as ``FILE: key.path: what was expected`` (one line each, all of
them at once); unknown keys suggest the closest valid name. ``RunConfig.resolved()`` is the
complete config with every default filled in: it is what a run directory stores and what resume
compares against.

Each YAML section is a small dataclass (``tuner.config.sections``) whose fields are its keys; the
family and its parameters are ``tuner.config.params``'s; the bounds of every value
``tuner.config.limits``'.

``family`` is a spec (``engine.families.get_family``): a built-in or registered name,
``module:Class``, or ``file.py:Class`` relative to the config's directory. Naming a family imports
it: a config is as trusted as the code it names. An ``engine`` section in its place names an
external engine (``tuner.config.engine``), started and greeted while the config is read.

Importing this module loads no numpy (the command line imports it to read its arguments), and
reading a config neither pycma nor numba: the families, the fitnesses and the strategies, numpy
code, are imported where a config is parsed, each import saying so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from engine import yaml_text
from engine.baselines import baseline_names, baseline_path
from engine.depth import TUNING, parse_depth
from engine.echo import shorten
from engine.errors import BadInput
from engine.weights_file import read_weights
from tuner.checker import Checker, describe
from tuner.config.limits import (
    AUTO,
    MAX_CONFIG_BYTES,
    MAX_GAMES_AT_ONCE,
    MAX_POPSIZE,
    MAX_SPEC,
    MAX_WORKERS,
)
from tuner.config.removed import harmless, refuse_removed
from tuner.config.sections import (
    RESUMABLE_CHANGES,
    SECTIONS,
    START,
    CMAESSection,
    EvaluationSection,
    RaySection,
    RunSection,
    SearchSection,
    StrategySection,
    ValidationSection,
)
from tuner.errors import ConfigError

if TYPE_CHECKING:
    from engine.external.player import EnginePlayer
    from engine.solver import PlayerSpec
    from tuner.config.engine import EngineSection
    from tuner.space import ParamSpec
    from tuner.strategies import Shared

__all__ = [  # what the rest of tune2048 reads from a config
    "AUTO", "MAX_GAMES_AT_ONCE", "MAX_POPSIZE", "MAX_WORKERS", "RESUMABLE_CHANGES",
    "RaySection", "RunConfig", "changed_keys", "load_config", "parse_config", "read_document",
    "stored_text", "value_at",
]

ENGINE = "engine"  # the section that names an external engine in place of a family


@dataclass(frozen=True)
class RunConfig:
    """A validated run config: its source, the family (or the external engine) and its
    parameters, and the sections."""

    source: str
    family: str | None  # a spec (a family file's path absolute), or None for an engine
    engine: EngineSection | None  # an external engine tuned in place of a family
    params: tuple[ParamSpec, ...]
    run: RunSection
    search: SearchSection
    evaluation: EvaluationSection
    cmaes: CMAESSection
    ray: RaySection
    validation: ValidationSection
    strategy: StrategySection

    @property
    def run_dir(self) -> Path:
        return Path(self.run.output_dir) / self.run.name

    @property
    def tuned(self) -> tuple[ParamSpec, ...]:
        return tuple(p for p in self.params if p.tuned)

    @property
    def popsize(self) -> int:
        """The first generation's candidates: the strategy's multiple of ``cmaes.popsize`` (of
        pycma's default where it is not set), once ``auto`` is resolved."""
        from tuner.strategies.base import default_popsize  # numpy code: when asked (start-up)

        base = self.cmaes.popsize if isinstance(self.cmaes.popsize, int) else default_popsize(
            len(self.tuned))
        return base * self.strategy.kind.scale(self.strategy.settings)

    @property
    def most_games(self) -> int:
        """The most games one candidate can play in a generation."""
        return self.evaluation.games.most

    @property
    def shared(self) -> Shared:
        """What a strategy reads of this config besides its own section (``cmaes.popsize``
        resolved: not ``auto``)."""
        from tuner.strategies import Shared  # numpy code: when asked (start-up)

        return Shared(seed=self.run.seed, sigma0=self.cmaes.sigma0, popsize=self.cmaes.popsize,
                      restarts=self.cmaes.restarts)

    def with_popsize(self, popsize: int, cpus: int) -> RunConfig:
        """This config with ``cmaes.popsize: auto`` resolved for ``cpus`` CPUs, read again by
        every check of a config, as if the number had been written (``ConfigError``)."""
        where = f"{self.source}: cmaes.popsize (auto, resolved to {popsize:,} for " \
                f"{cpus:,} CPU{'s' if cpus != 1 else ''})"
        return self.with_values({"cmaes.popsize": popsize}, {"cmaes.popsize": where})

    def player(self, weights: dict[str, float]) -> PlayerSpec | EnginePlayer:
        """The player this config's run plays at ``weights``: its family, depth and cutoff, or
        its engine and the engine's search."""
        if self.engine is not None:
            from engine.external.player import EnginePlayer  # numpy: when asked (start-up)

            return EnginePlayer(self.engine.engine, self.engine.declared.name, weights,
                                self.search.depth)
        # a function-level import only to keep start-up fast: engine.solver loads numba, which
        # reading a config never needs
        from engine.solver import PlayerSpec

        return PlayerSpec(self.family, weights, self.search.depth, self.search.cutoff)

    @property
    def shipped(self) -> dict:
        """What Ray ships of the config's engine: ``{EngineCommand: paths}`` (``evaluator_for``)."""
        return {self.engine.engine: self.engine.ship} if self.engine else {}

    @property
    def player_name(self) -> str:
        """What plays, for people: ``family classic`` or ``engine c-example 1.0``."""
        return f"engine {self.engine.declared.name}" if self.engine else f"family {self.family}"

    def with_values(self, values: dict[str, Any], options: dict[str, str]) -> RunConfig:
        """This config with ``values`` (by key path, ``search.depth``) in place of its keys,
        read again by every check of a config; a problem names the option that gave the value
        (``options``: key path to option): ``ConfigError``."""
        if not values:
            return self
        document = self.resolved()
        for path, value in values.items():
            section, _, name = path.partition(".")
            document[section][name] = value
        return parse_config(document, self.source, self.run_dir, options)

    def resolved(self) -> dict[str, Any]:
        """The complete config as a plain mapping, every default filled in."""
        from engine.families.registry import relative_spec  # here only to keep start-up fast

        params = {}
        for p in self.params:
            if p.tuned:
                params[p.name] = {"init": p.init, "low": p.low, "high": p.high, "scale": p.scale}
            else:
                params[p.name] = {"fixed": p.init}
        player = {ENGINE: self.engine.to_config(self.run_dir)} if self.engine else {
            "family": relative_spec(self.family, self.run_dir)}  # stored in the run directory
        resolved = {
            "run": self.run.to_config(),
            **player,
            "params": params,
            **{section.NAME: getattr(self, section.NAME).to_config() for section in SECTIONS[1:]},
        }
        if not self.strategy.implied:
            resolved[StrategySection.NAME] = self.strategy.to_config()
        return resolved


def load_config(path: str | os.PathLike) -> RunConfig:
    """Read and validate a config file; raise ConfigError listing every problem.

    A family file it names is relative to the config's directory."""
    return parse_config(read_document(path), str(path), Path(path).parent)


def read_document(path: str | os.PathLike) -> Any:
    """A YAML file's document, read the one way every config is read (a run's own
    ``config.yaml`` too): at most ``MAX_CONFIG_BYTES``, UTF-8, YAML 1.2 numbers. ``ConfigError``
    names the file and the line."""
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
        return yaml_text.load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}: {where}: invalid YAML ({shorten(str(problem))})") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{source}: YAML: invalid YAML ({shorten(str(err))})") from None


def parse_config(document: Any, source: str, base_dir: str | os.PathLike = ".",
                 options: dict[str, str] | None = None) -> RunConfig:
    """Validate an already-parsed config mapping (``source`` names it in messages, ``options``
    a key path a command-line option gave; a family file is relative to ``base_dir``). A key or
    value that an earlier version removed is refused before anything else (``removed``)."""
    check = Checker(source, options)
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: top level: expected a mapping of sections, got "
                          f"{'an empty file' if document is None else describe(document)}")
    document = refuse_removed(document, source)
    names = [section.NAME for section in SECTIONS]
    check.unknown_keys(document, (names[0], "family", ENGINE, "params", *names[1:],
                                  StrategySection.NAME), "")
    run = RunSection.parse(check, document)
    # the family and its boxes: numpy code, loaded where a config is read (start-up)
    from tuner.config.engine import parse_engine
    from tuner.config.params import parse_family, parse_params, read_params

    family = engine = None
    if ENGINE in document:
        if "family" in document:
            check.problem(ENGINE, "a config tunes a family or an engine: remove family or "
                                  "engine")
        engine = parse_engine(check, document[ENGINE], base_dir)
        params = read_params(check, document.get("params"),
                             engine.declared.params if engine else None)
    else:
        family = parse_family(check, document.get("family"), base_dir)
        params = parse_params(check, document.get("params"), family)
    sections = {}
    for section in SECTIONS[1:]:
        sections[section.NAME] = section.parse(check, document)
        if section is SearchSection:  # its problems where the section's are
            _check_search(check, sections[section.NAME], engine)
    strategy = None
    if not check.problems:
        strategy = StrategySection.parse(check, document, sections["evaluation"])
    if not check.problems:
        _check_population(check, params, sections, strategy)
        _check_reference(check, family, sections["validation"])
    if check.problems:
        raise ConfigError("\n".join(check.problems))
    from engine.families.registry import canonical_spec  # here only to keep start-up fast

    config = RunConfig(
        source=source, params=params, run=run, strategy=strategy, engine=engine,
        family=canonical_spec(document["family"], base_dir) if family else None, **sections)
    _check_run_files(config)
    return config


def stored_text(resolved: dict[str, Any]) -> str:
    """A run's ``config.yaml``: its resolved config as YAML that ``read_document`` reads back."""
    return yaml_text.dump(resolved)


def _check_run_files(config: RunConfig) -> None:
    """Refuse a config whose run could not read its own files back: a ``config.yaml`` larger
    than ``read_document`` reads (every parameter of the family is written out), or a family
    file that the run directory's files (``config.yaml``, ``best.yaml``) would name by a spec
    longer than a config or a weights file may give. A ``best.yaml`` then fits in what its
    reader reads too (``engine.weights_file.MAX_BYTES``)."""
    resolved = config.resolved()
    if config.cmaes.popsize == AUTO:  # once resolved, written as a number: the longest one
        resolved["cmaes"]["popsize"] = MAX_POPSIZE
    spec = resolved.get("family", "")
    if len(spec) > MAX_SPEC:
        raise ConfigError(f"{config.source}: family: from the run directory "
                          f"{shorten(str(config.run_dir))}, {shorten(config.family)} is a spec of "
                          f"{len(spec):,} characters, but a family spec is read back only up to "
                          f"{MAX_SPEC}: put run.output_dir nearer the family file")
    size = len(stored_text(resolved).encode("utf-8"))
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"{config.source}: params: the run's config.yaml, with all "
                          f"{len(config.params):,} parameters of the family written out, would be "
                          f"{size:,} bytes, but a config is read back only up to "
                          f"{MAX_CONFIG_BYTES:,}: use a family with fewer parameters")


def _check_population(check: Checker, params: tuple[ParamSpec, ...], sections: dict,
                      strategy: StrategySection) -> None:
    """What a run's population must allow, checked on the population it starts with: a number,
    pycma's default where it is not set, and for ``auto`` the least it resolves to (pycma's
    default; more only where the CPUs ask for it, and never more than ``MAX_GAMES_AT_ONCE``
    allows, ``tuner.loop.run.popsize_for``). Every game result of a generation is held until it
    is scored: a population that would hold more than ``MAX_GAMES_AT_ONCE`` is refused, as it
    would exhaust memory hours into a run."""
    cmaes = sections["cmaes"]
    games = sections["evaluation"].games.most
    from tuner.strategies.base import default_popsize  # numpy code: when asked (start-up)

    tuned = sum(p.tuned for p in params)
    # pycma's default population, 4 + 3 ln(n), times the strategy's; every restart doubles it
    scale = strategy.kind.scale(strategy.settings)
    numbered = isinstance(cmaes.popsize, int)
    base = cmaes.popsize if numbered else default_popsize(tuned)
    popsize = base * scale
    largest = popsize * 2**cmaes.restarts
    if largest * games > MAX_GAMES_AT_ONCE:
        population = (
            f"a population of {popsize:,} ({scale} x {base:,}, strategy {strategy.name})"
            if scale > 1 else f"popsize {popsize:,}" if numbered else
            f"popsize {AUTO}, at least pycma's default of {popsize:,}" if cmaes.popsize else
            f"pycma's default popsize of {popsize:,}") + (
            f", doubled by {cmaes.restarts} restart{'s' if cmaes.restarts > 1 else ''} to "
            f"{largest:,}" if cmaes.restarts else "")
        check.problem("cmaes.popsize" if cmaes.popsize else "evaluation.games",
                      f"a generation would hold {largest * games:,} game results at once "
                      f"({population}, times {games:,} games); at most "
                      f"{MAX_GAMES_AT_ONCE:,}: lower games, popsize or restarts")
    _check_validation_at_once(check, sections["validation"])


def _check_validation_at_once(check: Checker, validation) -> None:
    reference = validation.reference is not None
    held = (validation.top_k + 1 + reference) * validation.games
    if held > MAX_GAMES_AT_ONCE:
        check.problem("validation", f"the final validation would hold {held:,} game results at "
                                    f"once ((top_k {validation.top_k} + the mean"
                                    f"{' + the reference' if reference else ''}) times games "
                                    f"{validation.games:,}); at most {MAX_GAMES_AT_ONCE:,}: "
                                    "lower games or top_k")


def _check_search(check: Checker, search: SearchSection, engine: EngineSection | None) -> None:
    """A family's search is ours, and a tuning run affords at most ``TUNING`` of it; an
    engine's search is the engine's own, and must be one it declares."""
    from engine.external.player import search_for  # numpy: loaded where a config is read

    if search.depth is None or "search" in check.bad_sections:
        return
    try:
        if engine is None:
            parse_depth(search.depth, TUNING)  # a policy is checked as it is
        else:
            search_for(search.depth, engine.declared)
    except BadInput as err:
        check.problem("search.depth", str(err))


def _check_reference(check: Checker, family, validation) -> None:
    """A baseline named as ``validation.reference`` holds weights of the run's family (an
    engine's run has its start only)."""
    if validation.reference in (None, START):
        return
    if family is None:
        check.problem("validation.reference", f"the shipped baselines hold weights of our "
                                              f"families, not of an engine: name {START}")
        return
    held = read_weights(baseline_path(validation.reference)).family
    if held != family.name:
        same = [name for name in baseline_names()
                if read_weights(baseline_path(name)).family == family.name]
        instead = ", ".join(same) + " or " if same else ""
        check.problem("validation.reference",
                      f"{validation.reference} holds {held} weights, not the run's family "
                      f"({family.name}): name {instead}{START}")


def changed_keys(old: dict, new: dict, prefix: str = "") -> list[str]:
    """Key paths whose values differ between two resolved configs; a removed key that one of
    them holds at a harmless value (``tuner.config.removed``) and the other lacks is the same."""
    changed = []
    for key in sorted(set(old) | set(new)):
        path = f"{prefix}{key}"
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            changed.extend(changed_keys(a, b, f"{path}."))
        elif a != b and not (key not in new and harmless(path, a)
                             or key not in old and harmless(path, b)):
            changed.append(path)
    return changed


def value_at(resolved: dict, path: str) -> Any:
    """The value at a key path of ``changed_keys`` (None where it is not set)."""
    value: Any = resolved
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value
