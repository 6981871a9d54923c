"""Games spent to reach a validated fitness: adaptive games against a fixed budget.

For each run seed and each budget, tunes from a config's starting point with CMA-ES's best guess
(the distribution mean) validated on the held-out seeds after every generation, and records the
training games spent until the validated fitness first reaches the target. Validation games are
not counted: they measure, they do not tune.

Every run lives in its own directory under ``--out`` and is checkpointed each generation, so the
command can be stopped at any point and run again to go on where it was (a finished run is read,
not played again). Prints one line per run and a summary per budget, and writes
``OUT/budget.csv`` and ``OUT/budget.png`` (validated fitness against training games).

Run, for the depth-1 measurement of ``runs/RESULTS.md``::

    python bench/adaptive_budget.py --config configs/classic.yaml --target 50000 \\
        --seeds 1 2 3 --fixed 384 --adaptive 64 512 --workers 2 --out runs/budget-d1

``--start WEIGHTS`` starts every tuned parameter from a weights file (a path or a baseline's
name) instead of the config's ``init``, for a config whose own start is already past the target.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import signal
import statistics
import sys
from pathlib import Path

import yaml

from engine.atomic import atomic_write
from engine.weights_file import read_weights
from tuner import checkpoint as ckpt
from tuner.config import parse_config
from tuner.evaluation import evaluator_for
from tuner.run import TuningRun


def budgets(args: argparse.Namespace) -> dict[str, int | dict]:
    low, high = args.adaptive
    return {f"fixed {args.fixed}": args.fixed,
            f"adaptive {low}-{high}": {"min": low, "max": high, "batch": args.batch or low}}


def run_config(args: argparse.Namespace, label: str, games, seed: int):
    document = yaml.safe_load(Path(args.config).read_text())
    document["run"].update({"name": f"{label.replace(' ', '-')}-seed{seed}",
                            "output_dir": str(args.out), "seed": seed})
    document["evaluation"]["games"] = games
    document["validation"] = {**document.get("validation", {}),
                              "games": args.validation_games, "every": 1}
    document["cmaes"]["max_generations"] = args.max_generations
    document["cmaes"].pop("max_games", None)
    if args.start:
        start = read_weights(args.start)
        for name, entry in document["params"].items():
            if isinstance(entry, dict) and "fixed" not in entry:
                entry["init"] = start.weights[name]
    return parse_config(document, f"{args.config} ({label}, seed {seed})",
                        Path(args.config).parent)


def reached(history: list[dict], target: float) -> dict | None:
    return next((row for row in history if row.get("validated", -1) >= target), None)


def play_to_target(args, label, games, seed, evaluator) -> list[dict]:
    """The run's history, from its directory and as far as the target (or the generation cap)."""
    config = run_config(args, label, games, seed)
    run_dir = config.run_dir
    if (run_dir / ckpt.CHECKPOINT_FILE).exists():
        run = TuningRun.resume(config, run_dir, ckpt.load_state(run_dir), progress=False)
    else:
        run = TuningRun.start(config, run_dir, progress=False)
    run.evaluator = evaluator
    while reached(run.state.history, args.target) is None and run.stop_reason() is None:
        run.step()
        row = run.state.history[-1]
        print(f"  {label} seed {seed}: generation {row['generation']}, {row['games']:,} games, "
              f"validated {row.get('validated', float('nan')):,.0f}", flush=True)
    return run.state.history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True)
    parser.add_argument("--target", type=float, required=True, help="validated fitness to reach")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--fixed", type=int, default=384, help="games per candidate")
    parser.add_argument("--adaptive", type=int, nargs=2, default=[64, 512], metavar=("MIN", "MAX"))
    parser.add_argument("--batch", type=int, help="adaptive batch (default: MIN)")
    parser.add_argument("--validation-games", type=int, default=1000)
    parser.add_argument("--max-generations", type=int, default=60)
    parser.add_argument("--workers", type=int)
    parser.add_argument("--start", metavar="WEIGHTS",
                        help="start from these weights (a file or a baseline's name)")
    parser.add_argument("--out", type=Path, default=Path("outputs/budget"))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` stops it as Ctrl-C does

    try:
        measure(args)
    except KeyboardInterrupt:
        sys.exit("interrupted: every run keeps its last generation; run the same command again "
                 "to go on")


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def measure(args: argparse.Namespace) -> None:
    rows = []
    histories = {}
    labels = budgets(args)
    first = run_config(args, *next(iter(labels.items())), args.seeds[0])
    ray = dataclasses.replace(first.ray, workers=args.workers or first.ray.workers)
    with evaluator_for(ray, [first.family]) as evaluator:
        for label, games in labels.items():
            for seed in args.seeds:
                history = play_to_target(args, label, games, seed, evaluator)
                histories[(label, seed)] = history
                hit = reached(history, args.target)
                rows.append({"budget": label, "seed": seed,
                             "games_to_target": hit["games"] if hit else "",
                             "generations": hit["generation"] if hit else "",
                             "games_played": history[-1]["games"],
                             "best_validated": max(r.get("validated", 0) for r in history)})
                print(f"{label} seed {seed}: " + (
                    f"{hit['games']:,} games ({hit['generation']} generations) to "
                    f"{args.target:,.0f}" if hit else
                    f"not reached in {history[-1]['games']:,} games"), flush=True)
    summarize(args, rows)
    atomic_write(args.out / "budget.csv", ckpt.rows_csv(rows))
    plot(args, histories)


def summarize(args, rows: list[dict]) -> None:
    print(f"\ntraining games until the validated fitness first reaches {args.target:,.0f}")
    for label in budgets(args):
        spent = [r["games_to_target"] for r in rows if r["budget"] == label]
        done = [g for g in spent if g != ""]
        shown = ", ".join(f"{g:,}" if g != "" else "not reached" for g in spent)
        mean = f"; mean {statistics.fmean(done):,.0f}" if len(done) == len(spent) else ""
        print(f"  {label:<20} {shown}{mean}")


def plot(args, histories: dict) -> None:
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = dict(zip(budgets(args), ("tab:blue", "tab:red")))
    fig, ax = plt.subplots(figsize=(9, 5))
    for (label, seed), history in histories.items():
        points = [(r["games"], r["validated"]) for r in history if "validated" in r]
        ax.plot(*zip(*points), color=colors[label], alpha=0.8, marker=".",
                label=label if seed == args.seeds[0] else None)
    ax.axhline(args.target, color="gray", linestyle="--", label=f"target {args.target:,.0f}")
    ax.set_xlabel("training games spent")
    ax.set_ylabel(f"validated fitness ({args.validation_games} held-out games)")
    ax.set_title(f"{Path(args.config).name}: seeds {', '.join(map(str, args.seeds))}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    atomic_write(args.out / "budget.png", png.getvalue())
    print(f"wrote {args.out / 'budget.csv'} and {args.out / 'budget.png'}")


if __name__ == "__main__":
    main()
