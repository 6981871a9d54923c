"""What each strategy costs to reach a validated fitness: positions evaluated, CPU-seconds, games.

For every strategy and run seed, tunes from a config's start and, after every generation, plays
CMA-ES's best guess (the strategy's mean) on held-out games that are the same for every run of
the comparison (``validation_seeds(--validation-seed, N)``). A run's cost to the target is what
its training games had cost when that validated fitness first reached the target: positions
evaluated by the searches (deterministic, so the unit does not drift with the machine, and fair
between weights that play longer or shorter games), with CPU-seconds and games beside it.
Validation games are not counted: they measure, they do not tune. A run that stops (its
generation cap) before the target counts as not reaching it, never dropped: its cost is
infinite, and a median can be too.

Prints each run, then per strategy the median cost with a 95% bootstrap interval (over run
seeds), and each strategy's median over the first strategy's, with its bootstrap interval.
Writes ``OUT/runs.csv`` (one row per run), ``OUT/generations.csv`` (every validated generation)
and ``OUT/strategies.png`` (validated fitness against CPU-seconds, every run).

Every run lives in its own directory under ``--out`` and is checkpointed every generation, with
its validations beside it: stop the command at any point and run it again to go on where it
was (a finished run is read, not played again).

A strategy is written ``NAME:GAMES``, NAME one of ``tuner.strategies.STRATEGIES``: GAMES is
MIN-MAX for a strategy that races (batches of MIN), else a number of games, followed by xFACTOR
for one whose population is a multiple: ``fixed:384``, ``racing:64-512``, ``population:16x4``
(16 games, 4 x the population), ``uh-cma-es:64``, ``lra-cma-es:64``.

Run: ``python bench/strategy_cost.py --config configs/classic.yaml --target 50000 --strategies
racing:64-512 fixed:384 --seeds 1 2 3 --workers 2 --out outputs/strategies`` (see
runs/RESULTS.md for the measured comparisons and their commands).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import math
import signal
import statistics
import sys
from pathlib import Path

import numpy as np
import yaml

from engine.atomic import atomic_write
from engine.weights_file import read_weights
from tuner.cluster.ray_evaluator import evaluator_for
from tuner.config import parse_config
from tuner.games.seeds import validation_seeds
from tuner.loop.observers import Observers
from tuner.loop.run import TuningRun
from tuner.loop.step import Games
from tuner.store import checkpoint as ckpt
from tuner.strategies import STRATEGIES

BOOTSTRAP = 4000  # resamples for each interval


def strategy_section(spec: str) -> tuple[object, dict | None]:
    """``NAME:GAMES`` as the config's ``evaluation.games`` and ``strategy`` section (none for a
    strategy the games imply), as the strategy's registry entry says; ValueError says why not."""
    name, _, games = spec.partition(":")
    if name not in STRATEGIES:
        raise ValueError(f"the strategy is one of {', '.join(STRATEGIES)}")
    kind = STRATEGIES[name]
    section = None if kind.implied else {"name": name}
    if kind.games == "race":
        low, high = (int(g) for g in games.split("-"))
        return {"min": low, "max": high, "batch": low}, section
    count, _, factor = games.partition("x")
    if factor:
        if kind.factor is None:
            raise ValueError(f"{name}'s population is not a multiple: write {name}:{count}")
        section = {"name": name, kind.factor: int(factor)}
    return int(count), section


def run_config(args: argparse.Namespace, spec: str, seed: int):
    document = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    games, section = strategy_section(spec)
    document["run"].update({"name": f"{spec.replace(':', '-')}-seed{seed}",
                            "output_dir": str(args.out), "seed": seed})
    document["evaluation"]["games"] = games
    document["evaluation"].pop("reevaluate_best", None)
    document.pop("strategy", None)
    if section is not None:
        document["strategy"] = section
    document["validation"] = {**document.get("validation", {}), "every": 0}
    document["cmaes"]["max_generations"] = args.max_generations
    document["cmaes"].pop("max_games", None)
    if args.start:
        start = read_weights(args.start)
        for name, entry in document["params"].items():
            if isinstance(entry, dict) and "fixed" not in entry:
                entry["init"] = start.weights[name]
    return parse_config(document, f"{args.config} ({spec}, seed {seed})",
                        Path(args.config).parent)


def validate(run: TuningRun, evaluator, seeds: list[int]) -> float:
    """The fitness of the strategy's best guess on the comparison's held-out seeds."""
    weights = run.space.weights(run.strategy.mean)
    games = Games(run.config, evaluator, Observers())
    [results] = games.play("validation", [weights], seeds)
    return games.fitness(results).value


def play_to_target(args, spec: str, seed: int, evaluator, seeds: list[int]) -> list[dict]:
    """The run's validated generations (cost so far and validated fitness), from its directory
    and as far as the target or the generation cap."""
    config = run_config(args, spec, seed)
    run_dir = config.run_dir
    if (run_dir / ckpt.CHECKPOINT_FILE).exists():
        run = TuningRun.resume(config, run_dir, ckpt.load_state(run_dir), progress=False)
    else:
        run = TuningRun.start(config, run_dir, progress=False)
    rows = read_rows(run_dir / "validated.csv")
    while True:
        if len(rows) < run.state.generation:  # validated after its checkpoint, or not yet
            rows.append(cost_row(run, validate(run, evaluator, seeds)))
            atomic_write(run_dir / "validated.csv", ckpt.rows_csv(rows))
            print(f"  {spec} seed {seed}: generation {run.state.generation}, "
                  f"{rows[-1]['positions']:,} positions, validated {rows[-1]['validated']:,.0f}",
                  flush=True)
        if rows and rows[-1]["validated"] >= args.target or run.stop_reason() is not None:
            return rows
        run.step(evaluator)


def cost_row(run: TuningRun, validated: float) -> dict:
    """What the run's training games have cost so far, and its best guess's validated fitness."""
    state = run.state
    return {"generation": state.generation,
            "positions": sum(int(row.get("positions", 0)) for row in state.history),
            "cpu_seconds": sum(row["game_seconds"] for row in state.cluster),
            "games": state.games, "validated": validated}


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as file:
        return [{k: float(v) if k in ("cpu_seconds", "validated") else int(v)
                 for k, v in row.items()} for row in csv.DictReader(file)]


def bootstrap_median(values: list[float], rng: np.random.Generator) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the median (infinite values allowed)."""
    draws = rng.choice(np.asarray(values, dtype=float), size=(BOOTSTRAP, len(values)))
    medians = np.median(draws, axis=1)
    return _interval(medians)


def bootstrap_ratio(values: list[float], baseline: list[float],
                    rng: np.random.Generator) -> tuple[float, float]:
    """A 95% bootstrap interval of median(values) / median(baseline), each resampled apart."""
    top = np.median(rng.choice(np.asarray(values, float), (BOOTSTRAP, len(values))), axis=1)
    bottom = np.median(rng.choice(np.asarray(baseline, float), (BOOTSTRAP, len(baseline))),
                       axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = top / bottom  # never / never: NaN, left out
    ratios = ratios[~np.isnan(ratios)]
    return _interval(ratios) if len(ratios) else (math.nan, math.nan)


def _interval(draws: np.ndarray) -> tuple[float, float]:
    """The 2.5% and 97.5% quantiles of the draws, each one of them (no interpolation, which
    infinite draws would turn into NaN)."""
    low, high = np.quantile(draws, [0.025, 0.975], method="inverted_cdf")
    return float(low), float(high)


def measure(args: argparse.Namespace) -> None:
    seeds = validation_seeds(args.validation_seed, args.validation_games)
    first = run_config(args, args.strategies[0], args.seeds[0])
    ray = dataclasses.replace(first.ray, workers=args.workers or first.ray.workers)
    runs, curves = [], {}
    with evaluator_for(ray, [first.family]) as evaluator:
        for spec in args.strategies:
            for seed in args.seeds:
                rows = play_to_target(args, spec, seed, evaluator, seeds)
                curves[(spec, seed)] = rows
                hit = next((r for r in rows if r["validated"] >= args.target), None)
                runs.append({"strategy": spec, "seed": seed, "reached": hit is not None,
                             **{f"{k}_to_target": hit[k] if hit else math.inf
                                for k in ("positions", "cpu_seconds", "games", "generation")},
                             "best_validated": max(r["validated"] for r in rows)})
                print(f"{spec} seed {seed}: " + (
                    f"{hit['positions']:,} positions, {hit['cpu_seconds']:,.1f} CPU-s, "
                    f"{hit['games']:,} games ({hit['generation']} generations) to "
                    f"{args.target:,.0f}" if hit else
                    f"not reached in {rows[-1]['generation']} generations"), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    atomic_write(args.out / "runs.csv", ckpt.rows_csv(runs))
    atomic_write(args.out / "generations.csv", ckpt.rows_csv(
        [{"strategy": spec, "seed": seed, **row} for (spec, seed), rows in curves.items()
         for row in rows]))
    summarize(args, runs)
    plot(args, curves)


def summarize(args, runs: list[dict]) -> None:
    rng = np.random.default_rng(2048)
    base = args.strategies[0]
    print(f"\ncost until the validated fitness ({args.validation_games:,} held-out games) first "
          f"reaches {args.target:,.0f}: median [95% bootstrap interval] over "
          f"{len(args.seeds)} run seeds; ratio: the median over {base}'s")
    for unit in ("positions", "cpu_seconds", "games"):
        print(f"  {unit.replace('_', '-')}:")
        baseline = [r[f"{unit}_to_target"] for r in runs if r["strategy"] == base]
        for spec in args.strategies:
            costs = [r[f"{unit}_to_target"] for r in runs if r["strategy"] == spec]
            low, high = bootstrap_median(costs, rng)
            median, base_median = statistics.median(costs), statistics.median(baseline)
            ratio = median / base_median if math.isfinite(base_median) else math.nan
            r_low, r_high = bootstrap_ratio(costs, baseline, rng)
            reached = sum(math.isfinite(c) for c in costs)
            shown = (f"ratio {ratio:.2f} [{r_low:.2f}, {r_high:.2f}]" if math.isfinite(base_median)
                     else f"ratio - ({base} never reached it in most runs)")
            print(f"    {spec:<18} {_n(median, unit)} [{_n(low, unit)}, {_n(high, unit)}]  "
                  f"{shown}  reached {reached} of {len(costs)}")


def _n(value: float, unit: str) -> str:
    if not math.isfinite(value):
        return "never"
    return f"{value:,.1f}" if unit == "cpu_seconds" else f"{value:,.0f}"


def plot(args, curves: dict) -> None:
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {spec: f"C{i}" for i, spec in enumerate(args.strategies)}
    fig, ax = plt.subplots(figsize=(9, 5))
    for (spec, seed), rows in curves.items():
        ax.plot([r["cpu_seconds"] for r in rows], [r["validated"] for r in rows],
                color=colors[spec], alpha=0.7, marker=".",
                label=spec if seed == args.seeds[0] else None)
    ax.axhline(args.target, color="gray", linestyle="--", label=f"target {args.target:,.0f}")
    ax.set_xlabel("CPU-seconds of training games (one core of this machine)")
    ax.set_ylabel(f"validated fitness ({args.validation_games:,} held-out games)")
    ax.set_title(f"{Path(args.config).name}: run seeds {', '.join(map(str, args.seeds))}")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    atomic_write(args.out / "strategies.png", png.getvalue())
    print(f"wrote {args.out / 'runs.csv'}, {args.out / 'generations.csv'} and "
          f"{args.out / 'strategies.png'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--target", type=float, required=True, help="validated fitness to reach")
    parser.add_argument("--strategies", nargs="+", required=True, metavar="NAME:GAMES",
                        help="the first is the baseline of the ratios")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--validation-games", type=int, default=1000)
    parser.add_argument("--validation-seed", type=int, default=0,
                        help="the held-out games: validation_seeds(this, games), for every run")
    parser.add_argument("--max-generations", type=int, default=60)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--start", metavar="WEIGHTS",
                        help="start from these weights (a file or a baseline's name)")
    parser.add_argument("--out", type=Path, default=Path("outputs/strategies"))
    args = parser.parse_args()
    for spec in args.strategies:
        try:
            strategy_section(spec)
        except ValueError as err:
            parser.error(f"--strategies {spec}: {err}")
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does
    try:
        measure(args)
    except KeyboardInterrupt:
        sys.exit("interrupted: every run keeps its last generation; run the same command again "
                 "to go on")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    main()
