"""A validated run config, ``RunConfig``, and how one is made: ``load_config`` reads a file,
``parse_config`` checks a document, every key before any compute starts, and fills in defaults.

Every problem found is reported as ``FILE: key.path: what was expected`` (one line each, all of
them at once); unknown keys suggest the closest valid name. ``RunConfig.resolved()`` is the
complete config with every default filled in: it is what a run directory stores and what resume
compares against.

Each YAML section is a small dataclass (``tuner.config.sections``) whose fields are its keys; the
family and its parameters are ``tuner.config.params``'s; the checks between sections
``tuner.config.cross_checks``'; the bounds of every value ``tuner.config.limits``'.

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

from engine.echo import shorten
from tuner.checker import Checker, describe
from tuner.config.cross_checks import check_population, check_reference, check_search
from tuner.config.document import read_document, stored_text
from tuner.config.limits import AUTO, MAX_CONFIG_BYTES, MAX_POPSIZE, MAX_SPEC
from tuner.config.removed import refuse_removed
from tuner.config.sections import (
    SECTIONS,
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
    # the run directory, where it is not run.output_dir/run.name (a run resumed where it lies)
    directory: Path | None = None

    @property
    def run_dir(self) -> Path:
        """The run's directory: what the paths its ``resolved()`` config holds are relative to."""
        if self.directory is not None:
            return self.directory
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
        return parse_config(document, self.source, self.run_dir, options, self.directory)

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


def load_config(path: str | os.PathLike, run_dir: str | os.PathLike | None = None) -> RunConfig:
    """Read and validate a config file; raise ConfigError listing every problem.

    A family file and an engine's ``cwd`` it names are relative to the config's directory.
    ``run_dir``: the run directory of a run it continues (see ``parse_config``)."""
    return parse_config(read_document(path), str(path), Path(path).parent, run_dir=run_dir)


def parse_config(document: Any, source: str, base_dir: str | os.PathLike = ".",
                 options: dict[str, str] | None = None,
                 run_dir: str | os.PathLike | None = None) -> RunConfig:
    """Validate an already-parsed config mapping (``source`` names it in messages, ``options``
    a key path a command-line option gave; a family file and an engine's ``cwd`` are relative
    to ``base_dir``). ``run_dir``: the directory of the run it continues, where that is not
    ``run.output_dir/run.name`` (a run resumed where it lies): the paths of ``resolved()`` are
    relative to it. A key or value that an earlier version removed is refused before anything
    else (``tuner.config.removed``)."""
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
            check_search(check, sections[section.NAME], engine, ENGINE in document)
    strategy = None
    if not check.problems:
        strategy = StrategySection.parse(check, document, sections["evaluation"])
    if not check.problems:
        check_population(check, params, sections, strategy)
        check_reference(check, family, sections["validation"])
    if check.problems:
        raise ConfigError("\n".join(check.problems))
    from engine.families.registry import canonical_spec  # here only to keep start-up fast

    config = RunConfig(
        source=source, params=params, run=run, strategy=strategy, engine=engine,
        family=canonical_spec(document["family"], base_dir) if family else None,
        directory=None if run_dir is None else Path(run_dir), **sections)
    _check_run_files(config)
    return config


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
