"""A run config's sections: one small dataclass per YAML section, a key per field.

A field made with ``key(read)`` (``tuner.config.keys``) carries its own check and default;
parsing, the list of allowed keys, ``resolved()`` and the keys a resume may change all derive
from the fields. A new key is one field; a check between keys goes in its section's
``cross_check``, one between sections in ``tuner.config.cross_checks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from engine.depth import FORMS, DepthError, DepthPolicy, parse_depth, to_yaml
from engine.echo import echo, shorten
from engine.external.protocol import ENGINE_LIMITS
from tuner.checker import Checker, describe
from tuner.config.keys import Section, choice, integer, integer_or_auto, key, number, text
from tuner.config.limits import (
    ADAPTIVE_KEYS,
    AUTO,
    LOCAL,
    MAX_GAMES,
    MAX_GAMES_PER_TASK,
    MAX_GENERATIONS,
    MAX_NAME_BYTES,
    MAX_POPSIZE,
    MAX_RESTARTS,
    MAX_RETRIES,
    MAX_TIMEOUT,
    MAX_TOP_K,
    MAX_TOTAL_GAMES,
    MAX_WORKERS,
    MIN_ADAPTIVE_GAMES,
    MIN_SIGMA0,
    NAME_PATTERN,
    is_address,
)
from tuner.games.budget import AdaptiveGames, Budget, FixedGames, interval_z
from tuner.games.policy import DISPATCHES, SchedulePolicy


def _read_depth(check: Checker, mapping: dict, name: str, path: str) -> DepthPolicy:
    """``search.depth``: a depth policy (``engine.depth``), read as widely as an engine may
    declare; what a tuning run of a family can afford (``engine.depth.TUNING``), or the engine
    declares, is checked with the family or the engine (``tuner.config.cross_checks``)."""
    value = mapping.get(name)
    if value is None:
        check.problem(f"{path}.{name}", f"missing (expected {FORMS})")
        return 1
    try:
        return parse_depth(value, ENGINE_LIMITS)
    except DepthError as err:
        check.problem(f"{path}.{name}", str(err))
        return 1


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
    try:
        interval_z(confidence)  # what the race computes each round
    except ValueError:
        check.problem(f"{path}.confidence", f"{confidence!r} is too close to 1 for an interval "
                                            "in floating point: at most 0.9999999999999998")
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
    from tuner.games.fitness import FITNESSES  # numpy: loaded where a config is read (start-up)

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
    """``ray.address``: 'auto' or HOST:PORT, or None (an embedded Ray), which ``local`` says
    too: the word ``--address`` takes to move a run saved on a cluster onto this machine."""
    address = mapping.get(name)
    if address == LOCAL:
        return None
    if address is not None and not is_address(address):
        check.problem(f"{path}.{name}", f"expected 'auto', HOST:PORT or {LOCAL}, got "
                                        f"{echo(address)}")
        return None
    return address


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
    depth: DepthPolicy = key(_read_depth)  # noqa: RUF009 - key() makes a dataclasses.field
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

    def cross_check(self, check: Checker, mapping: dict) -> None:
        if self.tile is not None and self.tile & (self.tile - 1):
            check.problem("evaluation.tile", f"expected a power of two, got {self.tile}")

    @property
    def fitness_options(self) -> dict[str, Any]:
        """The keys the chosen fitness reads, as keyword arguments."""
        from tuner.games.fitness import FITNESSES  # numpy: loaded where a config is read (start-up)

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


START = "start"  # validation.start, validation.reference: the config's initial point


def _read_start(check: Checker, mapping: dict, name: str, path: str) -> bool:
    """``validation.start``: whether the initial point is validated beside the candidates, on
    the same seeds, so that a report can say whether the winner beat it (true by default)."""
    value = mapping.get(name, True)
    if not isinstance(value, bool):
        check.problem(f"{path}.{name}", f"expected true or false, got {describe(value)}")
        return True
    return value


def _read_reference(check: Checker, mapping: dict, name: str, path: str) -> str | None:
    """``validation.reference``: ``start`` or a shipped baseline's name (``engine.baselines``),
    validated with the final candidates as the mark a run's gain is judged against; none by
    default (it costs a candidate's validation games)."""
    from engine.baselines import baseline_names  # reads a directory: only when given

    if mapping.get(name) is None:
        return None
    return check.choice(mapping, name, path, (START, *baseline_names()))


@dataclass(frozen=True)
class ValidationSection(Section):
    NAME = "validation"
    REQUIRED = False
    games: int = key(integer(default=500, low=1, high=MAX_GAMES))
    top_k: int = key(integer(default=3, low=1, high=MAX_TOP_K))
    every: int = key(integer(default=0, low=0, high=MAX_GENERATIONS), omit=0)
    start: bool = key(_read_start, omit=True)
    reference: str | None = key(_read_reference, omit=None)

    @property
    def reference_label(self) -> str | None:
        return reference_label(self.reference)

    @property
    def validates_start(self) -> bool:
        """Whether the initial point plays the validation games: ``start``, or ``reference:
        start``."""
        return self.start or self.reference == START

    @property
    def marks(self) -> int:
        """The players validated beside the candidates, which never win: the start, and a
        baseline named as the ``reference``."""
        return int(self.validates_start) + (self.reference not in (None, START))


def reference_label(reference: str | None) -> str | None:
    """The ``candidate`` of the reference's row in ``validation.csv`` (``validation.reference``:
    ``start``, or ``baseline NAME``); None without a reference."""
    return None if reference is None else START if reference == START else f"baseline {reference}"


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
        # the strategies are numpy code: loaded where a config is read (start-up)
        from tuner.strategies import STRATEGIES, implied

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
        return cls(name, kind.read(check, raw))

    @property
    def kind(self):
        from tuner.strategies import STRATEGIES  # numpy code: as in parse (start-up)

        return STRATEGIES[self.name]

    def to_config(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings}

    @property
    def implied(self) -> bool:
        """Whether the games alone say this strategy (the section can be left out)."""
        return self.kind.implied


SECTIONS = (RunSection, SearchSection, EvaluationSection, CMAESSection, RaySection,
            ValidationSection)
RESUMABLE_CHANGES = tuple(name for section in SECTIONS for name in section.resumable_keys())
