"""``tune report RUN_DIR``: a run's summary table and its convergence plot.

The plot (``convergence.png``: best and median fitness per generation with the best's standard
error, sigma on a second axis, the validated winner marked) needs matplotlib, an optional extra:
``pip install 'tune2048[plot]'``. Without it the table is still printed.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
from pathlib import Path

from engine.atomic import atomic_write
from engine.weights_file import read_weights
from tuner import checkpoint as ckpt
from tuner.config import parse_config
from tuner.errors import CheckpointError
from tuner.space import SearchSpace

PLOT_FILE = "convergence.png"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("report", help="summarise a run and plot its convergence")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory, e.g. runs/quick")
    parser.add_argument("--no-plot", action="store_true", help="skip convergence.png")
    parser.set_defaults(handler=run)


def read_rows(path: Path, required: bool) -> list[dict[str, float | str]]:
    """A CSV written by the run, with numbers parsed; [] for an optional missing file."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise CheckpointError(f"{path}: missing: no generation has completed yet") from None
        return []
    rows = []
    for raw in csv.DictReader(text.splitlines()):
        rows.append({k: _parse(v) for k, v in raw.items()})
    if required and not rows:
        raise CheckpointError(f"{path}: empty: no generation has completed yet")
    return rows


def _parse(value: str) -> float | str:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def run(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    config = ckpt.read_stored_config(run_dir)
    history = read_rows(run_dir / ckpt.HISTORY_FILE, required=True)
    validation = read_rows(run_dir / ckpt.VALIDATION_FILE, required=False)
    best = read_weights(run_dir / ckpt.BEST_FILE)
    print(format_report(config, history, validation, best))
    if not args.no_plot:
        try:
            path = plot_convergence(run_dir, history, validation)
        except ImportError:
            print("convergence.png skipped: matplotlib is not installed "
                  "(pip install 'tune2048[plot]')")
        else:
            print(f"wrote {path}")
    return 0


def format_report(config: dict, history: list[dict], validation: list[dict], best) -> str:
    last = history[-1]
    top = max(history, key=lambda r: r["best"])
    lines = [
        (f"run           {config['run']['name']}  ({config['family']} family, depth "
        f"{config['search']['depth']}, fitness {config['evaluation']['fitness']})"),
        (f"generations   {int(last['generation'])}, {int(last['evaluations'])} candidates, "
        f"{int(last['games'])} training games"),
        (f"best in a generation   {top['best']:,.4g} +/- {top['best_stderr']:,.3g} "
        f"(generation {int(top['generation'])})"),
        f"final sigma   {last['sigma']:.3g}",
        "",
        f"{'gen':>5} {'best':>12} {'+/-':>9} {'median':>12} {'worst':>12} {'sigma':>8}",
    ]
    step = max(1, math.ceil(len(history) / 20))
    for row in history[::step] + ([last] if (len(history) - 1) % step else []):
        lines.append(
            f"{int(row['generation']):>5} {row['best']:>12,.4g} {row['best_stderr']:>9,.3g} "
            f"{row['median']:>12,.4g} {row['worst']:>12,.4g} {row['sigma']:>8.3g}"
        )
    if validation:
        lines += ["", "validation (held-out seeds)",
                  (f"{'candidate':<20} {'gen':>4} {'fitness':>12} {'+/-':>9} {'mean score':>12} "
                  f"{'95% CI':>10}")]
        for row in validation:
            lines.append(
                f"{row['candidate']:<20} {int(row['generation']):>4} {row['fitness']:>12,.4g} "
                f"{row['fitness_stderr']:>9,.3g} {row['mean_score']:>12,.0f} "
                f"{row['ci95']:>10,.0f}"
            )
    status = best.provenance.get("status", "")
    lines += ["", f"best.yaml     {status}"]
    lines += [f"  {name}: {value:.6g}" for name, value in best.weights.items()]
    edges = SearchSpace(parse_config(config, "the run's config.yaml")).edge_warnings(best.weights)
    lines += [f"warning: {line}" for line in edges]
    return "\n".join(lines)


def plot_convergence(run_dir: Path, history: list[dict], validation: list[dict]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gens = [r["generation"] for r in history]
    best = [r["best"] for r in history]
    se = [r["best_stderr"] for r in history]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.fill_between(gens, [b - s for b, s in zip(best, se)], [b + s for b, s in zip(best, se)],
                    alpha=0.2, color="tab:blue")
    ax.plot(gens, best, color="tab:blue", label="best of generation (+/- 1 s.e.)")
    ax.plot(gens, [r["median"] for r in history], color="tab:orange", label="median")
    if validation:
        winner = max(validation, key=lambda r: r["fitness"])
        ax.errorbar([gens[-1]], [winner["fitness"]], yerr=[1.96 * winner["fitness_stderr"]],
                    fmt="*", color="tab:red", markersize=12, capsize=4,
                    label=f"validated winner ({winner['candidate']}, 95% CI)")
    ax.set_xlabel("generation")
    ax.set_ylabel("fitness")
    sigma_ax = ax.twinx()
    sigma_ax.plot(gens, [r["sigma"] for r in history], color="tab:gray", linestyle="--",
                  label="sigma")
    sigma_ax.set_ylabel("sigma (normalised)")
    handles = ax.get_legend_handles_labels()
    sigma_handles = sigma_ax.get_legend_handles_labels()
    ax.legend(handles[0] + sigma_handles[0], handles[1] + sigma_handles[1], loc="lower right")
    ax.set_title(f"{run_dir.name}: convergence")
    fig.tight_layout()
    png = io.BytesIO()  # rendered in memory, so only atomic_write touches the run directory
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    path = run_dir / PLOT_FILE
    atomic_write(path, png.getvalue())
    return path
