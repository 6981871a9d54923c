"""Run configs: load a YAML file, check every key before any compute starts, fill in defaults.

Every problem found is reported as ``FILE: key.path: what was expected`` (one line each, all of
them at once); unknown keys suggest the closest valid name. ``RunConfig.resolved()`` is the
complete config with every default filled in: it is what a run directory stores and what resume
compares against.

Each YAML section is a small dataclass (``RunSection``, ``SearchSection``, ...) whose fields are
its keys: a field made with ``key(read)`` carries its own check and default, and parsing, the list
of allowed keys, ``resolved()`` and the keys a resume may change all derive from the fields. A new
key is one field; a check between keys goes in its section's ``cross_check``.

``family`` is a spec (``engine.families.get_family``): a built-in or registered name,
``module:Class``, or ``file.py:Class`` relative to the config's directory. Naming a family imports
it: a config is as trusted as the code it names.

Importing this module loads no numpy (the command line imports it to read its arguments), and
reading a config neither pycma nor numba: the families, the fitnesses and the strategies, numpy
code, are imported where a config is parsed, each import saying so.
"""

from __future__ import annotations

import difflib
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml

from engine import yaml_text
from engine.depth import FORMS, TUNING, DepthError, DepthPolicy, parse_depth, to_yaml
from engine.echo import echo, shorten
from tuner.checker import Checker, describe
from tuner.errors import ConfigError
from tuner.games.budget import AdaptiveGames, Budget, FixedGames
from tuner.games.fitness import FITNESSES
from tuner.games.schedule import DISPATCHES, SchedulePolicy
from tuner.space import ParamSpec, box_problem
from tuner.strategies import STRATEGIES, Shared, implied
from tuner.strategies.base import default_popsize

if TYPE_CHECKING:
    from engine.solver import PlayerSpec

MAX_WORKERS = 4096  # Ray CPUs a command asks for
ADDRESS_PATTERN = re.compile(r"^(auto|[A-Za-z0-9.-]+:\d{1,5})$")
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
# Game results a run holds at once (about 350 bytes each in the driver, as many again in Ray's
# object store): a generation's (popsize, doubled by every restart, times games), or the final
# validation's ((top_k + 1) times validation games).
MAX_GAMES_AT_ONCE = 1_000_000
# A smaller first step than this, on a box mapped onto [0, 1], is below what pycma resolves: the
# search stops at once (tolx), or at 5e-324 fails inside pycma after the first generation.
MIN_SIGMA0 = 1e-6
MAX_NAME_BYTES = 255  # a folder name, on the usual file systems (NAME_MAX)
MAX_SPEC = 256  # characters of a family spec
ADAPTIVE_KEYS = ("min", "max", "batch", "confidence", "tolerance")
MIN_ADAPTIVE_GAMES = 2  # a standard error needs two games
SCALES = ("linear", "log")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
AUTO = "auto"
_KEEP = object()  # key(omit=...)'s default: no value is left out of resolved()


# --- sections: one dataclass per YAML section, a key per field ---------------------------------

Read = Callable[[Checker, dict, str, str], Any]  # (check, section mapping, key, section name)


def key(read: Read, *, resumable: bool = False, omit: Any = _KEEP) -> Any:
    """A section's key: ``read`` checks the written value and returns it, or its default when it
    is absent. A ``resumable`` key may change when a run is resumed: it decides when the run stops
    or where it runs, never what it computes. A value equal to ``omit`` is left out of
    ``resolved()``, for a key that run directories written before it existed lack."""
    return field(metadata={"read": read, "resumable": resumable, "omit": omit})


def integer(**options) -> Read:
    return lambda check, mapping, name, path: check.integer(mapping, name, path, **options)


def integer_or_auto(**options) -> Read:
    """An integer, or ``auto``: chosen by the tuner, as the key's documentation says."""
    def read(check: Checker, mapping: dict, name: str, path: str) -> int | str | None:
        value = mapping.get(name, options.get("default"))
        if value == AUTO:
            return AUTO
        if isinstance(value, str):
            check.problem(f"{path}.{name}", f"expected an integer or {AUTO}, got {echo(value)}")
            return options.get("default")
        return check.integer(mapping, name, path, **options)
    return read


def depth_policy(check: Checker, mapping: dict, name: str, path: str) -> DepthPolicy:
    """``search.depth``: a depth policy (``engine.depth``) that a tuning run can afford
    (``engine.depth.TUNING``)."""
    value = mapping.get(name)
    if value is None:
        check.problem(f"{path}.{name}", f"missing (expected {FORMS})")
        return 1
    try:
        return parse_depth(value, TUNING)
    except DepthError as err:
        check.problem(f"{path}.{name}", str(err))
        return 1


def number(**options) -> Read:
    return lambda check, mapping, name, path: check.number(mapping, name, path, **options)


def choice(choices: tuple[str, ...], default: str) -> Read:
    return lambda check, mapping, name, path: check.choice(mapping, name, path, choices, default)


def text(**options) -> Read:
    return lambda check, mapping, name, path: check.text(mapping, name, path, **options)


def _read_games(check: Checker, mapping: dict, name: str, path: str) -> Budget | None:
    """``evaluation.games``: a number of games (every candidate plays them), or a mapping
    ``{min, max, batch, confidence, tolerance}`` for adaptive games (``tuner.games.budget``)."""
    raw = mapping.get(name)
    if not isinstance(raw, dict):
        games = check.integer(mapping, name, path, low=1, high=MAX_GAMES)
        return FixedGames(games) if games is not None else None
    path = f"{path}.{name}"
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


def _read_fitness(check: Checker, mapping: dict, name: str, path: str) -> str:
    """``evaluation.fitness``: the name of one of ``tuner.games.fitness.FITNESSES``."""

    return check.choice(mapping, name, path, tuple(FITNESSES), "mean_score")


def _read_output_dir(check: Checker, mapping: dict, name: str, path: str) -> str | None:
    """``run.output_dir``: a path whose every folder name a file system can hold, so that the run
    directory is not refused by the operating system once the run has started."""
    value = check.text(mapping, name, path, default="outputs", what="a directory path")
    if value is None:
        return None
    for part in Path(value).parts:
        if len(part.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            check.problem(f"{path}.{name}", f"a folder name of {len(part.encode('utf-8', 'surrogatepass')):,} bytes "
                                            f"({shorten(part, 40)}) is longer than file systems "
                                            f"take ({MAX_NAME_BYTES} bytes)")
            return None
    return value


def _read_address(check: Checker, mapping: dict, name: str, path: str) -> str | None:
    """``ray.address``: 'auto' or HOST:PORT, or None (an embedded Ray)."""
    address = mapping.get(name)
    if address is not None and not is_address(address):
        check.problem(f"{path}.{name}", f"expected 'auto' or HOST:PORT, got {echo(address)}")
        return None
    return address


class Section:
    """A config section: its ``NAME`` in the YAML, whether it is ``REQUIRED``, and its keys as
    fields made with ``key``; ``cross_check`` holds the checks that involve several keys."""

    NAME: ClassVar[str]
    REQUIRED: ClassVar[bool] = True

    @classmethod
    def parse(cls, check: Checker, document: dict) -> Section:
        mapping = check.section(document, cls.NAME, tuple(f.name for f in fields(cls)),
                                required=cls.REQUIRED)
        section = cls(**{f.name: f.metadata["read"](check, mapping, f.name, cls.NAME)
                         for f in fields(cls)})
        if cls.NAME not in check.bad_sections:
            section.cross_check(check, mapping)
        return section

    def cross_check(self, check: Checker, mapping: dict) -> None:
        """Record the problems between keys (``mapping``: the section as written)."""

    def to_config(self) -> dict[str, Any]:
        """The section as a plain mapping, every default filled in."""
        section = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata["omit"] is not _KEEP and value == f.metadata["omit"]:
                continue
            section[f.name] = value.to_config() if hasattr(value, "to_config") else value
        return section

    @classmethod
    def from_values(cls, source: str, options: dict[str, str] | None = None,
                    **values) -> Section:
        """The section with these values (None: left out) and every other key at its default,
        checked as a config's would be: ``ConfigError`` names what is wrong, after ``source``
        (or as ``options`` names a key path a command-line option gave)."""
        check = Checker(source, options)
        section = cls.parse(check, {cls.NAME: {k: v for k, v in values.items() if v is not None}})
        if check.problems:
            raise ConfigError("\n".join(check.problems))
        return section

    def with_values(self, values: dict[str, Any], options: dict[str, str]) -> Section:
        """This section with ``values`` (by key path, ``ray.workers``; other sections' left out)
        in place of its keys, checked as in a config; a problem names the option that gave the
        value (``options``: key path to option)."""
        prefix = f"{self.NAME}."
        given = {path.removeprefix(prefix): value for path, value in values.items()
                 if path.startswith(prefix)}
        return self.from_values(self.NAME, options, **{**self.to_config(), **given})

    @classmethod
    def resumable_keys(cls) -> tuple[str, ...]:
        return tuple(f"{cls.NAME}.{f.name}" for f in fields(cls) if f.metadata["resumable"])


@dataclass(frozen=True)
class RunSection(Section):
    NAME = "run"
    # At most 100 characters: the run is staged in .NAME.new, and a file system takes 255.
    name: str = key(text(pattern=NAME_PATTERN, max_length=100,
                         what="a name of letters, digits, '_', '.' or '-'"))
    output_dir: str = key(_read_output_dir)
    seed: int = key(integer(default=0, low=0, high=2**63 - 1))


@dataclass(frozen=True)
class SearchSection(Section):
    NAME = "search"
    depth: DepthPolicy = key(depth_policy)  # noqa: RUF009 - key() makes a dataclasses.field
    cutoff: float = key(number(default=1e-4, low=0.0, high=1.0, open_high=True))

    def to_config(self) -> dict[str, Any]:
        return {**super().to_config(), "depth": to_yaml(self.depth)}


@dataclass(frozen=True)
class EvaluationSection(Section):
    NAME = "evaluation"
    games: Budget = key(_read_games)  # noqa: RUF009 - key() makes a dataclasses.field
    fitness: str = key(_read_fitness)
    tile: int = key(integer(default=2048, low=4, high=32768))
    quantile: float = key(number(default=0.25, low=0.0, high=1.0, open_low=True,
                                 open_high=True))
    reevaluate_best: int = key(integer(default=0, low=0, high=MAX_POPSIZE))

    def cross_check(self, check: Checker, mapping: dict) -> None:
        if self.tile is not None and self.tile & (self.tile - 1):
            check.problem("evaluation.tile", f"expected a power of two, got {self.tile}")

    @property
    def fitness_options(self) -> dict[str, Any]:
        """The keys the chosen fitness reads, as keyword arguments."""

        return {name: getattr(self, name) for name in FITNESSES[self.fitness].params}


@dataclass(frozen=True)
class CMAESSection(Section):
    NAME = "cmaes"
    sigma0: float = key(number(default=0.25, low=MIN_SIGMA0, high=1.0))
    # auto: chosen from the cluster when the run starts, and written into the run's config
    popsize: int | str | None = key(integer_or_auto(low=2, high=MAX_POPSIZE, optional=True))
    max_generations: int | None = key(integer(low=1, high=MAX_GENERATIONS, optional=True),
                                      resumable=True)
    max_games: int | None = key(integer(low=1, high=MAX_TOTAL_GAMES, optional=True),
                                resumable=True)
    restarts: int = key(integer(default=0, low=0, high=MAX_RESTARTS))

    def cross_check(self, check: Checker, mapping: dict) -> None:
        if mapping.get("max_generations") is None and mapping.get("max_games") is None:
            check.problem("cmaes", "set max_generations or max_games (or both): a run needs an "
                                   "end")


@dataclass(frozen=True)
class RaySection(Section):
    NAME = "ray"
    REQUIRED = False
    address: str | None = key(_read_address, resumable=True)
    workers: int | None = key(integer(low=1, high=MAX_WORKERS, optional=True), resumable=True)
    games_per_task: int | str = key(integer_or_auto(default=AUTO, low=1,
                                                    high=MAX_GAMES_PER_TASK), resumable=True)
    dispatch: str = key(choice(DISPATCHES, "pipelined"), resumable=True, omit="pipelined")
    max_retries: int = key(integer(default=3, low=0, high=MAX_RETRIES), resumable=True)
    no_worker_timeout: float = key(number(default=60.0, low=0.0, high=MAX_TIMEOUT,
                                          open_low=True), resumable=True)
    connect_timeout: float = key(number(default=60.0, low=0.0, high=MAX_TIMEOUT, open_low=True),
                                 resumable=True)

    @property
    def schedule(self) -> SchedulePolicy:
        """How games are cut into tasks and dispatched: the one object the scheduler follows."""
        return SchedulePolicy(self.games_per_task, self.dispatch)


@dataclass(frozen=True)
class ValidationSection(Section):
    NAME = "validation"
    REQUIRED = False
    games: int = key(integer(default=500, low=1, high=MAX_GAMES))
    top_k: int = key(integer(default=3, low=1, high=MAX_TOP_K))
    every: int = key(integer(default=0, low=0, high=MAX_GENERATIONS), omit=0)


@dataclass(frozen=True)
class StrategySection:
    """``strategy``: the strategy's ``name`` and its own keys, as the registry
    (``tuner.strategies.STRATEGIES``) declares them. Without the section the games decide, as
    before it existed: the registry's ``implied`` strategy of a number or of a race; those have
    no keys of their own, so ``resolved()`` leaves the section out for them, and a run of
    tune2048 0.1 or 0.2 resolves as it did."""

    NAME: ClassVar[str] = "strategy"
    name: str
    settings: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, check: Checker, document: dict,
              evaluation: EvaluationSection) -> StrategySection | None:

        games = evaluation.games
        derived = implied("race" if isinstance(games, AdaptiveGames) else "number")
        raw = document.get(cls.NAME)
        if raw is None:
            return cls(derived)
        if not isinstance(raw, dict):
            check.problem(cls.NAME, f"expected a mapping, got {describe(raw)}")
            return None
        before = len(check.problems)
        name = check.choice(raw, "name", cls.NAME, tuple(STRATEGIES), derived)
        if len(check.problems) > before:
            return None  # its keys cannot be checked against an unknown strategy
        kind = STRATEGIES[name]
        check.unknown_keys(raw, ("name", *kind.keys), cls.NAME)
        if kind.games == "race" and isinstance(games, FixedGames):
            check.problem("evaluation.games", f"strategy {name} races the candidates: write "
                                              "evaluation.games: {min: ..., max: ...}")
        elif kind.games == "number" and isinstance(games, AdaptiveGames):
            check.problem("evaluation.games", f"strategy {name} plays a number of games per "
                                              f"candidate, not a race: write evaluation.games: "
                                              f"{games.min}")
        number = games.games if isinstance(games, FixedGames) else None
        return cls(name, kind.read(check, raw, number))

    @property
    def kind(self):

        return STRATEGIES[self.name]

    def cross_check(self, check: Checker, sections: dict) -> None:
        if sections["cmaes"].restarts and not self.kind.restarts:
            check.problem("cmaes.restarts", f"strategy {self.name} does not restart: set it to 0")
        if sections["evaluation"].reevaluate_best and not self.kind.reevaluate_best:
            check.problem("evaluation.reevaluate_best",
                          f"not with strategy {self.name}, which decides itself which "
                          "candidates play more: set it to 0")

    def to_config(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings}

    @property
    def implied(self) -> bool:
        """Whether the games alone say this strategy (the section can be left out)."""
        return self.kind.implied


SECTIONS = (RunSection, SearchSection, EvaluationSection, CMAESSection, RaySection,
            ValidationSection)
RESUMABLE_CHANGES = tuple(name for section in SECTIONS for name in section.resumable_keys())


@dataclass(frozen=True)
class RunConfig:
    """A validated run config: its source, the family and its parameters, and the sections."""

    source: str
    family: str  # a spec; a family file's path is absolute
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
        base = self.cmaes.popsize if isinstance(self.cmaes.popsize, int) else default_popsize(
            len(self.tuned))
        return base * self.strategy.kind.scale(self.strategy.settings)

    @property
    def most_games(self) -> int:
        """The most games one candidate can play in a generation."""
        games = self.evaluation.games
        return self.strategy.kind.most(games.most, self.strategy.settings)

    @property
    def shared(self) -> Shared:
        """What a strategy reads of this config besides its own section (``cmaes.popsize``
        resolved: not ``auto``)."""
        return Shared(seed=self.run.seed, sigma0=self.cmaes.sigma0, popsize=self.cmaes.popsize,
                      restarts=self.cmaes.restarts, games=self.evaluation.games)

    def with_popsize(self, popsize: int) -> RunConfig:
        """This config with ``cmaes.popsize`` resolved (``auto``, once a run knows its CPUs)."""
        return replace(self, cmaes=replace(self.cmaes, popsize=popsize))

    def player(self, weights: dict[str, float]) -> PlayerSpec:
        """The player this config's run plays at ``weights``: its family, depth and cutoff."""
        # a function-level import only to keep start-up fast: engine.solver loads numba, which
        # reading a config never needs
        from engine.solver import PlayerSpec

        return PlayerSpec(self.family, weights, self.search.depth, self.search.cutoff)

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
        resolved = {
            "run": self.run.to_config(),
            "family": relative_spec(self.family, self.run_dir),  # stored in the run directory
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
    a key path a command-line option gave; a family file is relative to ``base_dir``)."""
    check = Checker(source, options)
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: top level: expected a mapping of sections, got "
                          f"{'an empty file' if document is None else describe(document)}")
    names = [section.NAME for section in SECTIONS]
    check.unknown_keys(document, (names[0], "family", "params", *names[1:],
                                  StrategySection.NAME), "")
    run = RunSection.parse(check, document)
    family_spec = document.get("family")
    family = _parse_family(check, family_spec, base_dir)
    params = _parse_params(check, document.get("params"), family)
    sections = {section.NAME: section.parse(check, document) for section in SECTIONS[1:]}
    strategy = None
    if not check.problems:
        strategy = StrategySection.parse(check, document, sections["evaluation"])
    if strategy is not None and not check.problems:
        strategy.cross_check(check, sections)
    if not check.problems:
        _check_games_at_once(check, params, sections, strategy)
    if check.problems:
        raise ConfigError("\n".join(check.problems))
    from engine.families.registry import canonical_spec  # here only to keep start-up fast

    return RunConfig(source=source, family=canonical_spec(family_spec, base_dir), params=params,
                     run=run, strategy=strategy, **sections)


def _check_games_at_once(check: Checker, params: tuple[ParamSpec, ...], sections: dict,
                         strategy: StrategySection) -> None:
    """Every game result of a generation, and of the final validation, is held until it is
    scored: refuse a config whose numbers would hold more than ``MAX_GAMES_AT_ONCE``, which
    would otherwise exhaust memory hours into a run."""
    cmaes = sections["cmaes"]
    games = strategy.kind.most(sections["evaluation"].games.most, strategy.settings)
    if cmaes.popsize == AUTO:
        return _check_validation_at_once(check, sections["validation"])  # auto stays within
    tuned = sum(p.tuned for p in params)
    # pycma's default population, 4 + 3 ln(n), times the strategy's; every restart doubles it
    scale = strategy.kind.scale(strategy.settings)
    base = cmaes.popsize or default_popsize(tuned)
    popsize = base * scale
    largest = popsize * 2**cmaes.restarts
    if largest * games > MAX_GAMES_AT_ONCE:
        population = (
            f"a population of {popsize:,} ({scale} x {base:,}, strategy {strategy.name})"
            if scale > 1 else f"popsize {popsize:,}" if cmaes.popsize else
            f"pycma's default popsize of {popsize:,}") + (
            f", doubled by {cmaes.restarts} restart{'s' if cmaes.restarts > 1 else ''} to "
            f"{largest:,}" if cmaes.restarts else "")
        check.problem("cmaes.popsize" if cmaes.popsize else "evaluation.games",
                      f"a generation would hold {largest * games:,} game results at once "
                      f"({population}, times {games:,} games); at most "
                      f"{MAX_GAMES_AT_ONCE:,}: lower games, popsize or restarts")
    _check_validation_at_once(check, sections["validation"])


def _check_validation_at_once(check: Checker, validation) -> None:
    held = (validation.top_k + 1) * validation.games
    if held > MAX_GAMES_AT_ONCE:
        check.problem("validation", f"the final validation would hold {held:,} game results at "
                                    f"once ((top_k {validation.top_k} + the mean) times games "
                                    f"{validation.games:,}); at most {MAX_GAMES_AT_ONCE:,}: "
                                    "lower games or top_k")


def _parse_family(check: Checker, spec: Any, base_dir: str | os.PathLike):
    """The family a config names, or None after reporting why there is none."""
    # here only to keep start-up fast: the built-in families are numpy code
    from engine.families import FamilyNotFound, get_family
    from engine.families.registry import family_names

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


def _parse_params(check: Checker, raw: Any, family) -> tuple[ParamSpec, ...]:
    """Each family parameter: tuned ({init, low, high, scale}) or fixed (a number or {fixed})."""

    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        check.problem("params", f"expected a mapping of parameter names, got {describe(raw)}")
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


def _check_heuristic(check: Checker, family, specs: list[ParamSpec]) -> None:
    """The family's heuristic must be finite at the initial point and at both ends of every box
    (one tuned parameter at its low or high, the others at their initial values): 2d + 1
    points, numpy only (``engine.finite``). Weights the search cannot use would otherwise fail
    inside Ray, after compute has started."""
    # here only to keep start-up fast: numpy, which the check itself needs
    import numpy as np

    from engine import finite
    from engine.families import FamilyCodeError

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


def value_at(resolved: dict, path: str) -> Any:
    """The value at a key path of ``changed_keys`` (None where it is not set)."""
    value: Any = resolved
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def is_address(address: object) -> bool:
    """Whether ``address`` names a Ray cluster: 'auto', or HOST:PORT with a port 1 to 65535."""
    return isinstance(address, str) and bool(ADDRESS_PATTERN.match(address)) and (
        address == "auto" or 0 < int(address.rsplit(":", 1)[1]) < 65536)
