"""What ``tune report`` shows: a run's summary table and its convergence plot.

The plot (``convergence.png``) has two panels: best and median fitness per generation with the
best's standard error, sigma on a second axis and the validated winner marked; and fitness
against the training games spent, with the best guesses validated during the run
(``validation.every``). It needs matplotlib, an optional extra: ``pip install 'tune2048[plot]'``.
Without it the table is still printed.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from engine.atomic import atomic_write
from engine.echo import echo, shorten
from engine.families.registry import file_spec_path, is_file_spec
from engine.weights_file import WeightsFile, read_weights
from tuner import checkpoint as ckpt
from tuner.config import RunConfig, parse_config
from tuner.errors import CheckpointError, ConfigError
from tuner.space import SearchSpace

PLOT_FILE = "convergence.png"
# The columns the report reads (the run writes more); generation counts must be whole numbers.
HISTORY_COLUMNS = ("generation", "evaluations", "games", "best", "best_stderr", "median",
                   "worst", "sigma")
VALIDATION_COLUMNS = ("candidate", "generation", "fitness", "fitness_stderr", "mean_score",
                      "ci95")
COUNT_COLUMNS = ("generation", "evaluations", "games")
TEXT_COLUMNS = ("candidate",)


def read_rows(path: Path, columns: tuple[str, ...], required: bool) -> list[dict[str, float | str]]:
    """A CSV written by the run, with ``columns`` checked and parsed; [] for an optional missing
    file. A run directory is trusted, but a file cut short by a full disk or edited by hand is
    refused with a ``CheckpointError`` naming the file, the line and the column."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if required:
            raise CheckpointError(f"{path}: missing: no generation has completed yet") from None
        return []
    except (OSError, UnicodeDecodeError) as err:
        why = err.strerror if isinstance(err, OSError) else "not UTF-8 text"
        raise CheckpointError(f"{path}: cannot read: {why}") from None
    rows = []
    try:
        reader = csv.DictReader(text.splitlines())
        header = reader.fieldnames or []
        missing = [c for c in columns if c not in header]
        if header and missing:
            raise CheckpointError(f"{path}: line 1: missing column {missing[0]!r} (expected "
                                  f"{', '.join(columns)})")
        for line, raw in enumerate(reader, start=2):
            rows.append(_parse_row(path, line, raw, columns, len(header)))
    except csv.Error as err:
        raise CheckpointError(f"{path}: not a CSV file ({shorten(str(err))})") from None
    if required and not rows:
        raise CheckpointError(f"{path}: empty: no generation has completed yet")
    return rows


def _parse_row(path: Path, line: int, raw: dict, columns: tuple[str, ...],
               width: int) -> dict[str, float | str]:
    # DictReader puts the fields beyond the header under None and fills missing ones with None
    fields = width + len(raw.get(None) or ()) - sum(v is None for v in raw.values())
    if fields != width:
        raise CheckpointError(f"{path}: line {line}: expected {width} fields, got {fields} "
                              "(a truncated or damaged line)")
    row: dict[str, float | str] = {k: _parse(v) for k, v in raw.items()}
    for column in columns:
        value = row[column]
        if column in TEXT_COLUMNS:
            continue
        if not isinstance(value, float) or (column in COUNT_COLUMNS and not (
                math.isfinite(value) and value >= 0 and value == int(value))):
            what = "a whole number" if column in COUNT_COLUMNS else "a number"
            raise CheckpointError(f"{path}: line {line}: {column}: expected {what}, got "
                                  f"{echo(raw[column])}")
    return row


def _parse(value: str) -> float | str:
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def read_run_config(run_dir: Path) -> tuple[dict, RunConfig]:
    """The stored config, as written and validated; ``CheckpointError`` names the file."""
    path = run_dir / ckpt.CONFIG_FILE
    stored = ckpt.read_stored_config(run_dir)
    try:
        config = parse_config(stored, str(path), run_dir)
    except ConfigError as err:
        first = str(err).splitlines()[0].removeprefix(f"{path}: ")
        count = len(str(err).splitlines())
        more = f" (and {count - 1} more problems)" if count > 1 else ""
        raise CheckpointError(f"{path}: not a valid run config: {first}{more}") from None
    return stored, config


def read_best(run_dir: Path, config: RunConfig) -> WeightsFile:
    """``best.yaml``, which must hold weights of the run's family. A family file the run's
    config names may be imported for it: the config already imported it."""
    path = run_dir / ckpt.BEST_FILE
    trusted = [file_spec_path(config.family)] if is_file_spec(config.family) else []
    best = read_weights(path, trusted)
    if best.family != config.family:
        raise CheckpointError(f"{path}: family: {echo(best.family)} is not the family of the run "
                              f"in {run_dir / ckpt.CONFIG_FILE} ({echo(config.family)})")
    return best


def numbers(history: list[dict], column: str) -> list[tuple[float, float]]:
    """(games spent, value) for the rows that have a value in an optional column (rows written
    before the column existed, or generations it skipped, leave the cell empty)."""
    return [(row["games"], row[column]) for row in history
            if isinstance(row.get(column), float) and math.isfinite(row[column])]


def format_report(config: dict, history: list[dict], validation: list[dict], best,
                  space: SearchSpace) -> str:
    last = history[-1]
    top = max(history, key=lambda r: r["best"])
    saved = sum(value for _, value in numbers(history, "games_saved"))
    spent = f"{int(last['games'])} training games" + (
        f" ({int(saved)} saved by adaptive games)" if saved else "")
    validated = dict(numbers(history, "validated"))
    lines = [
        (f"run           {config['run']['name']}  ({config['family']} family, depth "
        f"{config['search']['depth']}, fitness {config['evaluation']['fitness']})"),
        (f"generations   {int(last['generation'])}, {int(last['evaluations'])} candidates, "
        f"{spent}"),
        (f"best in a generation   {top['best']:,.4g} +/- {top['best_stderr']:,.3g} "
        f"(generation {int(top['generation'])})"),
        f"final sigma   {last['sigma']:.3g}",
        "",
        f"{'gen':>5} {'games':>10} {'best':>12} {'+/-':>9} {'median':>12} {'worst':>12} "
        f"{'sigma':>8}" + (f" {'validated':>12}" if validated else ""),
    ]
    step = max(1, math.ceil(len(history) / 20))
    for row in history[::step] + ([last] if (len(history) - 1) % step else []):
        check = validated.get(row["games"])
        lines.append(
            f"{int(row['generation']):>5} {int(row['games']):>10} {row['best']:>12,.4g} "
            f"{row['best_stderr']:>9,.3g} {row['median']:>12,.4g} {row['worst']:>12,.4g} "
            f"{row['sigma']:>8.3g}" + (f" {check:>12,.4g}" if check is not None else "")
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
    edges = space.edge_warnings(best.weights)
    lines += [f"warning: {line}" for line in edges]
    return "\n".join(lines)


def plot_convergence(path: Path, history: list[dict], validation: list[dict],
                     title: str) -> Path:
    """Write the convergence plot of a run's history to ``path``, atomically."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gens = [r["generation"] for r in history]
    best = [r["best"] for r in history]
    se = [r["best_stderr"] for r in history]
    fig, (ax, games_ax) = plt.subplots(1, 2, figsize=(14, 4.5))
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
    ax.set_title(f"{title}: convergence")
    plot_against_games(games_ax, history)
    fig.tight_layout()
    png = io.BytesIO()  # rendered in memory, so only atomic_write touches the run directory
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    atomic_write(path, png.getvalue())
    return path


def plot_against_games(ax, history: list[dict]) -> None:
    """Fitness against the training games spent: what a budget buys."""
    spent = [r["games"] for r in history]
    ax.plot(spent, [r["best"] for r in history], color="tab:blue", label="best of generation")
    ax.plot(spent, [r["median"] for r in history], color="tab:orange", label="median")
    validated = numbers(history, "validated")
    if validated:
        ax.plot(*zip(*validated), "o-", color="tab:red", label="best guess, validated")
    ax.set_xlabel("training games spent")
    ax.set_ylabel("fitness")
    ax.legend(loc="lower right")
    ax.set_title("fitness against games")
