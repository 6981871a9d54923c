"""The game time a run is priced at (``tuner.analysis.price``), chosen alike by ``tune run
--dry-run`` and by the run itself as it starts (``game_time``), so that the two say one price: the
time its own generations recorded (a resumed run), else one an earlier run of the config in its
run directory recorded, else games timed now.

Timed now: games at the config's starting weights on its first training seeds, on this
process's own CPU clock (other processes do not inflate it), for ``MEASURE_SECONDS`` at most,
and no more games than ``MEASURE_SHARE`` of the run's (a small run's start stays short), times
the factors of ``tuner.analysis.price`` for the run's depth. The machine's other work is
measured meanwhile (``tuner.games.throughput.LoadWatch``): a game time timed on a busy machine,
whose speed moves by up to ``BUSY_TIMING_SPREAD`` over minutes, is a range, and its words say
how busy the machine was and how that was measured. The same games give ``tune status`` its
idle-core figure (``GameTime.idle_rate``).
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Iterable
from typing import NamedTuple

from engine.errors import BadInput
from engine.external.player import EngineLost, close_kept
from engine.stats import counted
from tuner.analysis.price import (
    GameTime,
    busy_over_idle,
    default_cpus,
    most_games,
    positions_over_start,
    positions_text,
    recorded,
    recorded_game_time,
    rough_game_time,
    run_over_start,
    seconds_text,
)
from tuner.config import RunConfig
from tuner.games import throughput
from tuner.games.progress import said_if_slow
from tuner.games.seeds import training_seeds
from tuner.space import SearchSpace

MEASURE_SECONDS = 10.0  # CPU-seconds of games measured now (at least one game)
MEASURE_GAMES = 256  # and at most this many games,
MEASURE_SHARE = 0.05  # or this share of the games the run plays, if fewer
LONGEST_MEASURED = 30.0  # seconds: a depth whose rough game is longer gets the rough figure
# A core's speed on a machine shared with other work: the same start timed three times on a
# shared 2-core machine took 1.01 to 1.55 times its fastest (bench/price_fit.py --repeat 3), and
# classic-d3's price 35 minutes apart 35.1 and 50.7 CPU-hours (1.44). A game time measured while
# other work kept the machine busy is priced as a range down to this many times faster.
BUSY_TIMING_SPREAD = 1.55


def game_time(config: RunConfig, cluster: Iterable[dict] = (), played: int = 0) -> GameTime:
    """The game time a run of ``config`` is priced at, by ``--dry-run`` and by the run itself
    as it starts, alike: the one its own generations recorded (``cluster``'s rows over
    ``played`` training games: a resumed run), else the one an earlier run of the config in its
    run directory recorded, else measured now (``measured_game_time``)."""
    return (recorded(cluster, played, "recorded by this run")
            or recorded_game_time(config.run_dir, config)
            or measured_game_time(config))


def measured_game_time(config: RunConfig, budget: float | None = None) -> GameTime:
    """Games at the config's starting weights (``start_game_times``), their mean CPU time times
    ``run_over_start`` at the config's depth (an external engine's as measured: how its games
    change as it is tuned is not known), the machine's other work measured meanwhile. A depth
    of ours whose games are too long to play here gets the rough figure."""
    rough = rough_game_time(config)
    if rough is not None and rough.seconds > LONGEST_MEASURED:
        return rough
    with throughput.LoadWatch() as load:
        games = start_game_times(config, budget)
    times = [game.seconds for game in games]
    start = statistics.fmean(times)
    spread = (f" +/- {statistics.stdev(times) / math.sqrt(len(times)) / start:.0%}"
              if len(times) > 1 and start > 0 else "")
    source = (f"measured now: {counted(len(times), 'game')} at the starting weights, "
              f"{seconds_text(start)}{spread} a game")
    busy, machine = _machine(load.other)
    if config.engine is not None:
        return GameTime(start, f"{source}; {machine}", busy)
    positions = statistics.fmean(game.positions for game in games)
    depth = config.search.depth
    return GameTime(start * run_over_start(depth),
                    f"{source} ({positions_text(positions)} positions), "
                    f"x{positions_over_start(depth):g} positions for a run's games at this "
                    f"depth, x{busy_over_idle(depth):g} on busy cores; {machine}", busy,
                    sum(g.positions for g in games) / sum(times) if sum(times) > 0 else None)


def _machine(other: throughput.OtherWork | None) -> tuple[float, str]:
    """The spread of a game time timed while ``other`` work ran, and the words for it."""
    if other is None:
        return 1.0, "the machine's other work while timing is not known"
    if not other.busy:
        return 1.0, f"timed on an idle machine ({other.describe()})"
    return BUSY_TIMING_SPREAD, (f"timed on a busy machine ({other.describe()}): on an idle one "
                                f"as little as 1/{BUSY_TIMING_SPREAD:g} of that")


class StartGame(NamedTuple):
    """One game at a config's starting weights: its CPU-seconds and the positions it searched."""

    seconds: float
    positions: int


def start_game_times(config: RunConfig, budget: float | None = None) -> list[StartGame]:
    """Games at the config's starting weights, on its first training seeds, one after another
    until ``budget`` CPU-seconds are spent (None: ``MEASURE_SECONDS``, and no more games than
    ``MEASURE_SHARE`` of the run's), at least one game, at most ``MEASURE_GAMES``, timed on the
    playing thread's own clock; an external engine's games by their wall time, the engine
    running alone."""
    space = SearchSpace(config.params)
    solver = throughput.solver_for(config.player(space.weights(space.initial())))
    seconds_at_most = MEASURE_SECONDS if budget is None else budget
    count = MEASURE_GAMES
    if budget is None:
        run_games = most_games(config, default_cpus(config.ray.workers)).total
        count = max(1, min(count, math.ceil(MEASURE_SHARE * run_games)))
    games: list[StartGame] = []
    try:
        with said_if_slow(f"timing games at the starting weights to price the run (at most "
                          f"{seconds_at_most:g} s, at least one game)"):
            for seed in training_seeds(config.run.seed, 1, count):
                started = time.thread_time()
                game = solver.play(seed)
                seconds = game.seconds if config.engine else time.thread_time() - started
                games.append(StartGame(seconds, game.moves_evaluated))
                if sum(each.seconds for each in games) >= seconds_at_most:
                    break
    except EngineLost as lost:
        raise BadInput(f"{config.source}: engine: {lost}") from None
    finally:
        close_kept()
    return games
