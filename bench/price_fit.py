"""The price ``tune run --dry-run`` gives beside what real runs took.

Two sets of runs, each priced as ``--dry-run`` prices it (``tuner.analysis.price``), on the CPUs
it ran on, plus ``START_SECONDS`` for each sitting it was resumed in:

- *measured*: the shipped configs run in full with today's code, one after another on an idle
  machine, each between two timings of its start (``--campaign``: games at its starting weights
  on one core, the machine otherwise idle, just before and just after the run, the mean of the
  two kept: a core's speed here moves over minutes), kept in bench/data/price_runs.json with the
  run's wall time (the sum of its sittings, from its ``run.log``), its games' CPU-seconds and the
  positions they searched. The estimate is that start times ``run_over_start`` at the config's
  depth. Beside the wall times, the positions a game the estimate assumes (the start's times
  ``positions_over_start``) over the run's: a game's positions depend on its weights and seed
  alone, so that ratio is the same on every machine.
- *recorded*: runs/RESULTS.md's campaigns (older code; their wall times from the table). The
  game time at the start is bench/data/game_times.json's where it holds a config with the same
  family, parameters and search (first-generation candidates timed on an idle core,
  bench/record_game_times.py), else measured now.

The goal: every ratio within 0.75 to 1.25.

Run: ``python bench/price_fit.py`` (a minute; ``--runs classic-d3`` prices some runs by name).
``python bench/price_fit.py --campaign configs/classic.yaml ... --workers 2`` runs configs in full
into ``--dir`` (run it again to go on) and writes them to ``--data``; ``--record RUN_DIR ...``
times finished runs' starts now instead. ``--repeat N`` times each measured run's start N times
now and prices it with each: how far the machine's own speed moves an estimate.

What it fits is ``tuner.analysis.price``, the module ``--dry-run`` prices with; the rest of
tune2048 it reaches through documented seams: ``load_config`` and ``parse_config``, the ``tune``
command (``run``, ``resume``, ``status``), and a run directory's files (docs/cli.md).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

import yaml

from engine.atomic import atomic_write
from tuner.analysis import price, timing
from tuner.config import START, RunConfig, load_config, parse_config

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
PRICE_RUNS = ROOT / "bench" / "data" / "price_runs.json"
RECORD_SECONDS = 20.0  # CPU-seconds of games at a run's start that --record plays
LOG_TIME = "%Y-%m-%d %H:%M:%S,%f"  # run.log's time stamps (logging's asctime)


def recorded_start(config) -> price.GameTime | None:
    """game_times.json's first-generation games of a shipped config that starts where ``config``
    does, with its allowance; None where it holds none."""
    recorded = json.loads(GAME_TIMES.read_text(encoding="utf-8"))["configs"]
    mine = config.resolved()
    for name, entry in recorded.items():
        shipped = load_config(ROOT / "configs" / f"{name}.yaml").resolved()
        if all(shipped[key] == mine[key] for key in ("family", "params", "search")):
            start = statistics.fmean(game[1] for games in entry["candidates"] for game in games)
            return from_start(start, config, f"game_times.json ({name}),")
    return None


def from_start(start: float, config, where: str) -> price.GameTime:
    """A run's game time from its start's (``start`` CPU-seconds a game), as ``--dry-run`` prices
    one: times ``run_over_start`` at the config's depth."""
    factor = price.run_over_start(config.search.depth)
    return price.GameTime(start * factor, f"{where} {price.seconds_text(start)} x{factor:g}")


def estimate(config, cpus: int, sittings_run: int, game_time: price.GameTime
             ) -> tuple[price.Price, float]:
    """The price of ``config`` on ``cpus`` and its wall seconds, plus a start for each sitting
    after the first."""
    result = price.price(config, cpus, game_time)
    return result, result.wall_seconds(cpus) + (sittings_run - 1) * price.START_SECONDS


def sittings(run_dir: Path, name: str) -> list[float]:
    """The wall seconds of each sitting of a run, from its ``run.log``: from a sitting's first
    line (``run NAME: ...``, as the run ``name`` starts) to its last; for a log without lines,
    ``status.json``'s start to its last update. Work a sitting lost when it was cut
    (a generation it had not finished) is not counted: it is no part of what the config costs."""
    walls, first, last = [], None, None
    for line in (run_dir / "run.log").read_text(encoding="utf-8").splitlines():
        try:
            stamp = datetime.datetime.strptime(line[:23], LOG_TIME).timestamp()
        except ValueError:
            continue  # a message's second line
        if line[24:].startswith(f"run {name}: "):
            if first is not None:
                walls.append(last - first)
            first = stamp
        last = stamp
    if first is not None:
        walls.append(last - first)
    if not walls:  # a log with no line (older code wrote none under --quiet): one sitting
        status = json.loads((run_dir / "status.json").read_text(encoding="utf-8"))
        walls.append(status["updated"] - status["started"])
    return walls


def timed_start(config, seconds: float) -> dict:
    """The config's start timed here now: its games, their mean CPU-seconds and positions."""
    games = timing.start_game_times(config, seconds)
    return {"games": len(games),
            "seconds": round(statistics.fmean(game.seconds for game in games), 6),
            "positions": round(statistics.fmean(game.positions for game in games))}


def stored_config(run_dir: Path) -> tuple[dict, RunConfig]:
    """The config a run directory holds (its ``config.yaml``), as its document and parsed."""
    if not (run_dir / "config.yaml").is_file():
        print(f"bench/price_fit.py: error: {run_dir}: not a run: it holds no config.yaml",
              file=sys.stderr)
        raise SystemExit(2)
    try:
        config = load_config(run_dir / "config.yaml")
    except ValueError as err:  # ConfigError: one line naming the file
        print(f"bench/price_fit.py: error: {run_dir}: not a run: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    return config.resolved(), config


def validated_start(run_dir: Path) -> bool:
    """Whether a finished run validated its start (``validation.csv`` has its row): runs
    before 0.4 did not, and their price must not count those games."""
    path = run_dir / "validation.csv"
    if not path.exists():
        return False  # a run that validated nothing
    with path.open(encoding="utf-8", newline="") as file:
        return any(row.get("candidate") == START for row in csv.DictReader(file))


def as_validated(config: RunConfig, started: bool) -> RunConfig:
    """``config`` as its run validated: with or without its start."""
    if config.validation.start == started:
        return config
    return config.with_values({"validation.start": started}, {})


def read_rows(path: Path, columns: tuple[str, ...]) -> list[dict[str, float]]:
    """A run's CSV file (``history.csv``, ``cluster.csv``): ``columns`` of every row, as
    numbers; ``ValueError`` for a file without them or without rows."""
    with path.open(encoding="utf-8", newline="") as file:
        rows = [{column: float(row[column]) for column in columns}
                for row in csv.DictReader(file)]
    if not rows:
        raise ValueError(f"{path.name}: no generation")
    return rows


def run_figures(run_dir: Path) -> tuple[RunConfig, dict]:
    """A finished run's config and what the data file keeps of it, its start's timing aside."""
    document, config = stored_config(run_dir)
    try:
        cluster = read_rows(run_dir / "cluster.csv", ("cpus", "game_seconds"))
        history = read_rows(run_dir / "history.csv", ("games", "positions"))
        walls = sittings(run_dir, config.run.name)
        started = validated_start(run_dir)
    except (ValueError, OSError, KeyError, TypeError) as err:
        print(f"bench/price_fit.py: error: {run_dir}: not a run that played: {err}",
              file=sys.stderr)
        raise SystemExit(2) from None
    return config, {
        "recorded": datetime.date.today().isoformat(),
        "config": document,
        "cpus": int(max(row["cpus"] for row in cluster)),
        "sittings": len(walls),
        "wall_seconds": round(sum(walls), 1),
        "generations": len(cluster),
        "training_games": int(history[-1]["games"]),
        "game_seconds": round(sum(row["game_seconds"] for row in cluster), 1),
        "positions": int(sum(row["positions"] for row in history)),
        "validated_start": started,
    }


def with_start(name: str, held: dict, start: dict) -> dict:
    """A run's figures with its start's timing, said in one line."""
    held = {**held, "start_games": start["games"], "start_game_seconds": start["seconds"],
            "start_positions": start["positions"]}
    for key in ("before", "after"):
        if key in start:
            held[f"start_{key}_seconds"] = start[key]
    games = held["training_games"]
    print(f"{name}: {held['wall_seconds']:,} s in {held['sittings']} sittings, "
          f"{price.seconds_text(held['game_seconds'] / games)} and "
          f"{price.positions_text(held['positions'] / games)} positions a game; its start "
          f"{price.seconds_text(start['seconds'])} and {price.positions_text(start['positions'])}"
          f" over {start['games']} games", flush=True)
    return held


def write_runs(runs: dict, out: Path) -> None:
    recorded = {"recorded": datetime.date.today().isoformat(),
                "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                "runs": runs}
    atomic_write(out, json.dumps(recorded, indent=1) + "\n")
    print(f"wrote {out}")


def record(run_dirs: list[Path], out: Path, seconds: float) -> None:
    """Measure each finished run's start here, after it, and write the runs to ``out``."""
    finished = [run_figures(run_dir) for run_dir in run_dirs]  # every file read first
    runs = {config.run.name: with_start(config.run.name, held, timed_start(config, seconds))
            for config, held in finished}
    write_runs(runs, out)


def campaign(config_paths: list[Path], where: Path, workers: int | None, out: Path,
             seconds: float) -> None:
    """Each config run in full into ``where`` on ``workers`` CPUs, one after another, its start
    timed just before and just after its run (the mean of the two is its start: the machine's
    speed moves over minutes); the runs written to ``out`` as each ends. Run it again and it
    goes on: a timing or a finished run it holds is kept, a cut run resumed."""
    where.mkdir(parents=True, exist_ok=True)
    runs = json.loads(out.read_text(encoding="utf-8"))["runs"] if out.exists() else {}
    for path in config_paths:
        config = load_config(path)
        name = config.run.name
        if name in runs:
            continue
        timing_file = where / f"{name}.start.json"
        timing = (json.loads(timing_file.read_text(encoding="utf-8"))
                  if timing_file.exists() else {})
        if "before" not in timing:
            timing["before"] = timed_start(config, seconds)
            atomic_write(timing_file, json.dumps(timing) + "\n")
        run_dir = where / name
        if not finished(run_dir):
            if run_dir.exists():
                command = ["resume", str(run_dir)]
            else:
                document = yaml.safe_load(path.read_text(encoding="utf-8"))
                document["run"]["output_dir"] = str(where)
                copy = where / f"{name}.yaml"
                atomic_write(copy, yaml.safe_dump(document, sort_keys=False))
                command = ["run", str(copy)]
            if workers is not None:
                command += ["--workers", str(workers)]
            played = subprocess.run([sys.executable, "-m", "tuner", *command], check=False)
            if played.returncode:
                raise SystemExit(f"bench/price_fit.py: tune {command[0]} {name}: exit status "
                                 f"{played.returncode}; run the campaign again to go on")
        if "after" not in timing:
            timing["after"] = timed_start(config, seconds)
            atomic_write(timing_file, json.dumps(timing) + "\n")
        before, after = timing["before"], timing["after"]
        longer = max(before, after, key=lambda timed: timed["games"])  # the same first seeds
        start = {"games": before["games"] + after["games"],
                 "seconds": round((before["seconds"] + after["seconds"]) / 2, 6),
                 "positions": longer["positions"], "before": before["seconds"],
                 "after": after["seconds"]}
        runs[name] = with_start(name, run_figures(run_dir)[1], start)
        write_runs(runs, out)


def finished(run_dir: Path) -> bool:
    """Whether ``tune status`` says the run at ``run_dir`` is done."""
    if not run_dir.exists():
        return False
    said = subprocess.run([sys.executable, "-m", "tuner", "status", str(run_dir)],
                          capture_output=True, text=True, check=False)
    return said.returncode == 3 and said.stdout.startswith(f"{run_dir}: done")


def measured_rows(data: Path, names: list[str] | None) -> list[tuple]:
    """(name, config, CPUs, sittings, real wall seconds, game time, the estimate's positions a
    game over the run's) of the runs in ``data``; the last None where it holds no positions."""
    held = json.loads(data.read_text(encoding="utf-8"))
    rows = []
    for name, run in held["runs"].items():
        if names and name not in names:
            continue
        config = as_validated(parse_config(run["config"], f"{data.name}: {name}"),
                              run.get("validated_start", False))  # absent: recorded before 0.4
        when = run.get("recorded", held["recorded"])  # the file's date, in older files
        game_time = from_start(run["start_game_seconds"], config, f"start on {when},")
        positions = None
        if "positions" in run:
            estimate_positions = (run["start_positions"]
                                  * price.positions_over_start(config.search.depth))
            positions = estimate_positions / (run["positions"] / run["training_games"])
        rows.append((name, config, run["cpus"], run["sittings"], run["wall_seconds"], game_time,
                     positions))
    return rows


def recorded_rows(names: list[str] | None, measure_seconds: float) -> list[tuple]:
    """The same for runs/RESULTS.md's campaigns."""
    rows = []
    for where, real, cpus, sittings_run in CAMPAIGNS:
        if names and Path(where).name not in names:
            continue
        config = as_validated(load_config(ROOT / where / "config.yaml"),
                              validated_start(ROOT / where))
        game_time = recorded_start(config) or timing.measured_game_time(config, measure_seconds)
        rows.append((Path(where).name, config, cpus, sittings_run, real, game_time, None))
    return rows


def repeat_starts(data: Path, names: list[str] | None, repeats: int, seconds: float) -> None:
    """Each measured run's start timed ``repeats`` times, one after another, and the ratio of
    the estimate each gives to the real wall time."""
    print(f"{'run':<20} {'recorded':>9}  now (estimate / real)")
    spreads = []
    for name, config, cpus, sittings_run, real, game_time, _ in measured_rows(data, names):
        starts = [timed_start(config, seconds)["seconds"] for _ in range(repeats)]
        ratios = [estimate(config, cpus, sittings_run, from_start(start, config, "now"))[1]
                  / real for start in starts]
        spreads.append(max(starts) / min(starts))
        recorded = game_time.seconds / price.run_over_start(config.search.depth)
        timed = "  ".join(f"{price.seconds_text(start)} ({ratio:.2f})"
                          for start, ratio in zip(starts, ratios, strict=True))
        print(f"{name:<20} {price.seconds_text(recorded):>9}  {timed}", flush=True)
    if spreads:
        print(f"slowest over fastest start, run by run: {min(spreads):.2f} to {max(spreads):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", nargs="*", help="runs by name (default: all)")
    parser.add_argument("--measure-seconds", type=float,
                        help="CPU-seconds of games measured now a config (default: as "
                             f"--dry-run; with --record or --repeat, {RECORD_SECONDS:g})")
    parser.add_argument("--record", nargs="+", type=Path, metavar="RUN_DIR",
                        help="measure these finished runs' starts and write them to --data")
    parser.add_argument("--data", type=Path,
                        help="the measured runs (default: bench/data/price_runs.json)")
    parser.add_argument("--campaign", nargs="+", type=Path, metavar="CONFIG",
                        help="run these configs in full, their starts timed before and after "
                             "each, and write them to --data (default: DIR/price_runs.json)")
    parser.add_argument("--dir", type=Path, default=Path("outputs/price-campaign"),
                        help="where --campaign runs (default: outputs/price-campaign)")
    parser.add_argument("--workers", type=int,
                        help="--campaign's CPUs (default: as tune run, all cores)")
    parser.add_argument("--repeat", type=int, metavar="N",
                        help="time each measured run's start N times now and price it with each")
    args = parser.parse_args()
    if args.measure_seconds is None:
        args.measure_seconds = (RECORD_SECONDS if args.record or args.repeat or args.campaign
                                else timing.MEASURE_SECONDS)
    if args.campaign:
        campaign(args.campaign, args.dir, args.workers, args.data or args.dir / PRICE_RUNS.name,
                 args.measure_seconds)
        return
    args.data = args.data or PRICE_RUNS
    if args.record:
        record(args.record, args.data, args.measure_seconds)
        return
    if args.repeat:
        repeat_starts(args.data, args.runs, args.repeat, args.measure_seconds)
        return
    print(f"{'run':<20} {'CPUs':>4} {'games':>8} {'game time':>9} {'estimate':>12} "
          f"{'real':>12} {'ratio':>6} {'positions':>9}  game time from")
    inside = []
    for label, rows in (("measured", lambda: measured_rows(args.data, args.runs)),
                        ("recorded", lambda: recorded_rows(args.runs, args.measure_seconds))):
        ratios, work = [], []
        for name, config, cpus, sittings_run, real, game_time, positions in rows():
            result, wall = estimate(config, cpus, sittings_run, game_time)
            ratios.append(wall / real)
            if positions is not None:
                work.append(positions)
            print(f"{name:<20} {cpus:>4} {result.games.total:>8,} "
                  f"{price.seconds_text(game_time.seconds):>9} {price.duration(wall):>12} "
                  f"{price.duration(real):>12} {wall / real:>6.2f} "
                  f"{'-' if positions is None else f'{positions:.2f}':>9}  {label}: "
                  f"{game_time.source}", flush=True)
        if ratios:
            inside.append(f"{label} {sum(0.75 <= r <= 1.25 for r in ratios)} of {len(ratios)}"
                          + (f" (their positions a game {sum(0.75 <= r <= 1.25 for r in work)} "
                             f"of {len(work)})" if work else ""))
    print(f"within 25%: {', '.join(inside) or 'no run'}")


if __name__ == "__main__":
    main()
