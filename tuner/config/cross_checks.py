"""The checks of a config that involve several sections, run once each section has read its own
keys: the population a run starts with against the games it may hold at once, a search against
the family or the engine, a validation reference against the family. Each records its problem
on the ``Checker`` under the key path to change, as a section's own checks do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.baselines import baseline_names, baseline_path
from engine.depth import TUNING, parse_depth
from engine.errors import BadInput
from engine.weights_file import read_weights
from tuner.checker import Checker
from tuner.config.limits import AUTO, MAX_GAMES_AT_ONCE
from tuner.config.sections import START, SearchSection, StrategySection, ValidationSection

if TYPE_CHECKING:
    from tuner.config.engine import EngineSection
    from tuner.space import ParamSpec


def check_population(check: Checker, params: tuple[ParamSpec, ...], sections: dict,
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


def _check_validation_at_once(check: Checker, validation: ValidationSection) -> None:
    held = (validation.top_k + 1 + validation.marks) * validation.games
    marks = (" + the start" if validation.validates_start else "") + (
        " + the reference" if validation.reference not in (None, START) else "")
    if held > MAX_GAMES_AT_ONCE:
        check.problem("validation", f"the final validation would hold {held:,} game results at "
                                    f"once ((top_k {validation.top_k} + the mean{marks}) times "
                                    f"games {validation.games:,}); at most "
                                    f"{MAX_GAMES_AT_ONCE:,}: lower games or top_k")


def check_search(check: Checker, search: SearchSection, engine: EngineSection | None,
                 names_engine: bool = False) -> None:
    """A family's search is ours, and a tuning run affords at most ``TUNING`` of it; an
    engine's search is the engine's own, and must be one it declares, whatever ours allow
    (``names_engine`` with no ``engine``: it did not start, and says nothing)."""
    from engine.external.player import search_for  # numpy: loaded where a config is read

    if search.depth is None or "search" in check.bad_sections or names_engine and not engine:
        return
    try:
        if engine is None:
            parse_depth(search.depth, TUNING)  # a policy is checked as it is
        else:
            search_for(search.depth, engine.declared)
    except BadInput as err:
        check.problem("search.depth", str(err))


def check_reference(check: Checker, family, validation: ValidationSection) -> None:
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
