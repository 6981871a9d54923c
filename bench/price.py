"""The price ``tune run --dry-run`` gives beside what shipped runs really took.

Each campaign of runs/RESULTS.md's table is priced from its run directory's ``config.yaml`` (the
config it ran with) on the CPUs it ran on, plus ``START_SECONDS`` for each sitting it was resumed
in, and set beside its recorded wall time (runs/RESULTS.md: those runs' directories hold no
timings but classic-d3-fixed64's). The game time at the start is bench/data/game_times.json's
where it holds a config with the same family, parameters and search (first-generation candidates
timed on an idle core, bench/record_game_times.py), else measured now as ``--dry-run`` measures
it (the playing thread's CPU clock: a busy machine inflates it less than the wall clock, but
still inflates it); either way times the allowances for tuned weights and busy cores
(``tuner.analysis.price``). The goal: every ratio within 0.75 to 1.25.

Run: ``python bench/price.py`` (a minute; ``--runs classic-d3`` prices one campaign).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from tuner.analysis import price
from tuner.config import load_config

ROOT = Path(__file__).resolve().parents[1]
# (run directory, wall seconds, CPUs, sittings), as runs/RESULTS.md's campaign table gives them
CAMPAIGNS = [
    ("runs/classic-d1", 13 * 60, 2, 1),
    ("runs/snake-d1", 29 * 60, 2, 1),  # sharing the CPUs
    ("runs/features-d1", 3 * 60 + 20, 16, 1),
    ("runs/combined-d1", 4 * 60 + 10, 16, 1),
    ("runs/classic-d2", 55 * 60, 2, 2),  # "about 55 min"
    ("runs/snake-d2", 39 * 60, 2, 1),
    ("runs/features-d2", 9 * 60, 16, 1),
    ("runs/classic-d3", 9 * 3600 + 56 * 60, 2, 8),
    ("runs/strategies-d3/classic-d3-fixed64", 3 * 3600 + 22 * 60, 2, 2),
]
GAME_TIMES = ROOT / "bench" / "data" / "game_times.json"


def recorded_start(config) -> price.GameTime | None:
    """game_times.json's first-generation games of a shipped config that starts where ``config``
    does, with its allowances; None where it holds none."""
    recorded = json.loads(GAME_TIMES.read_text(encoding="utf-8"))["configs"]
    mine = config.resolved()
    for name, entry in recorded.items():
        shipped = load_config(ROOT / "configs" / f"{name}.yaml").resolved()
        if all(shipped[key] == mine[key] for key in ("family", "params", "search")):
            start = statistics.fmean(game[1] for games in entry["candidates"] for game in games)
            factor = price.TUNED_GAMES * price.BUSY_CORES
            return price.GameTime(start * factor, f"game_times.json ({name}), "
                                                  f"{price.seconds_text(start)} x{factor:g}")
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="*", help="campaigns by run name (default: all)")
    parser.add_argument("--measure-seconds", type=float, default=price.MEASURE_SECONDS,
                        help="CPU-seconds of games measured now a config (default: as "
                             "--dry-run)")
    args = parser.parse_args()
    print(f"{'run':<20} {'CPUs':>4} {'games':>8} {'game time':>9} {'estimate':>12} "
          f"{'real':>12} {'ratio':>6}  game time from")
    ratios = []
    for where, real, cpus, sittings in CAMPAIGNS:
        if args.runs and Path(where).name not in args.runs:
            continue
        config = load_config(ROOT / where / "config.yaml")
        game_time = recorded_start(config) or price.measured_game_time(config,
                                                                       args.measure_seconds)
        result = price.price(config, cpus, game_time)
        estimate = result.wall_seconds(cpus) + (sittings - 1) * price.START_SECONDS
        ratios.append(estimate / real)
        print(f"{Path(where).name:<20} {cpus:>4} {result.games.total:>8,} "
              f"{price.seconds_text(game_time.seconds):>9} {price.duration(estimate):>12} "
              f"{price.duration(real):>12} {estimate / real:>6.2f}  {game_time.source}",
              flush=True)
    inside = sum(0.75 <= r <= 1.25 for r in ratios)
    print(f"within 25%: {inside} of {len(ratios)}")


if __name__ == "__main__":
    main()
