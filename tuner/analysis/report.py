"""What ``tune report`` shows: a run's summary table and its convergence plot.

Every ``+/-`` is the half-width of a 95% confidence interval (``engine.stats``), as the report
says; the files it reads keep standard errors.

The summary and the plot say whether the winner beat the start (the initial point, validated
on the same games: ``validation.start``), from the pairs of games, and "within noise" where the
95% interval of the gain holds 0. The plot (``convergence.png``, ``convergence_figure``) shows
fitness by generation with the start and a baseline reference (``validation.reference``) as
lines, where the run validated them, and the step size below; the games of each generation
too, where adaptive games make them vary. It needs matplotlib, an optional extra (``plot``):
without it a plot asked for is refused before anything is read, with the command that installs
the extra (``plotting_problem``).
"""

from __future__ import annotations

import csv
import io
import math
import shlex
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING

from engine.atomic import atomic_write
from engine.echo import echo, shorten
from engine.stats import Z95, clock, counted, interval_cell, plus_minus, readable
from engine.weights_file import WeightsFile, read_weights
from tuner import installed
from tuner.analysis.gains import gains, validated_winner, validation_parts
from tuner.config import RunConfig, parse_config
from tuner.config.sections import START, reference_label
from tuner.errors import CheckpointError, ConfigError
from tuner.games import throughput
from tuner.store import checkpoint as ckpt

if TYPE_CHECKING:
    from tuner.space import SearchSpace

PLOT_FILE = "convergence.png"
# The columns the report reads (the run writes more); each number is checked for its range
# (tuner.store.checkpoint.COLUMN_KINDS).
HISTORY_COLUMNS = ("generation", "evaluations", "games", "best", "best_stderr", "median",
                   "worst", "sigma")
VALIDATION_COLUMNS = ("candidate", "generation", "fitness", "fitness_stderr", "mean_score",
                      "ci95")
CLUSTER_COLUMNS = ("generation", "cpus", "seconds", "game_seconds", "share")
TEXT_COLUMNS = ("candidate",)
CI_NOTE = ("+/- is the half-width of a 95% confidence interval; - where there is none: one game, "
           "or games that all came out the same")


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
    for column, value in row.items():
        # each number in its range (tuner.store.checkpoint.COLUMN_KINDS); an empty cell where
        # the report can do without it: a column the run did not record in that generation
        kind = ckpt.COLUMN_KINDS.get(column, ckpt.VALUE if column in columns else None)
        if column in TEXT_COLUMNS or kind is None or (value == "" and column not in columns):
            continue
        if (expected := ckpt.number_problem(kind, value)) is not None:
            raise CheckpointError(f"{path}: line {line}: {column}: expected {expected}, got "
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
        config = parse_config(stored, str(path), run_dir, run_dir=run_dir)
    except ConfigError as err:
        first = str(err).splitlines()[0].removeprefix(f"{path}: ")
        count = len(str(err).splitlines())
        more = f" (and {count - 1} more problems)" if count > 1 else ""
        raise CheckpointError(f"{path}: not a valid run config: {first}{more}") from None
    return stored, config


def read_best(run_dir: Path, config: RunConfig, validated: bool) -> WeightsFile | None:
    """``best.yaml``, which must hold weights of the run's family (or engine). A run writes it with its first
    checkpoint, so it must be there beside a checkpoint or a validation; None where the directory
    keeps only the run's config and history (as the shipped seed runs of a campaign do). A family
    file or module the run's config names may be imported for it: the config imported it."""
    path = run_dir / ckpt.BEST_FILE
    history_only = not (validated or (run_dir / ckpt.CHECKPOINT_FILE).exists())
    if history_only and not (path.exists() or path.is_symlink()):
        return None
    # here only to keep start-up fast: the built-in families are numpy code
    from engine.families.registry import file_spec_path, is_file_spec

    if config.engine is not None:
        best = read_weights(path)
        name = config.engine.declared.name
        if best.engine != name:
            raise CheckpointError(f"{path}: engine: {echo(best.engine)} is not the engine of the "
                                  f"run in {run_dir / ckpt.CONFIG_FILE} ({echo(name)})")
        return best
    files = [file_spec_path(config.family)] if is_file_spec(config.family) else []
    modules = [config.family.rpartition(":")[0]] if not files and ":" in config.family else []
    best = read_weights(path, files, modules)
    if best.family != config.family:
        raise CheckpointError(f"{path}: family: {echo(best.family)} is not the family of the run "
                              f"in {run_dir / ckpt.CONFIG_FILE} ({echo(config.family)})")
    return best


def player_text(config: dict) -> str:
    """What played a run, from its stored config: ``classic family`` or ``engine ./c_engine``."""
    if "engine" in config:
        return f"engine {shlex.join(config['engine']['command'])}"
    return f"{config['family']} family"


def numbers(history: list[dict], column: str) -> list[tuple[float, float]]:
    """(games spent, value) for the rows that have a value in an optional column (rows written
    before the column existed, or generations it skipped, leave the cell empty)."""
    return [(row["games"], row[column]) for row in history
            if isinstance(row.get(column), float) and math.isfinite(row[column])]


def format_report(config: dict, history: list[dict], validation: list[dict], best,
                  space: SearchSpace, machines: list[dict] = (),
                  idle_rate: float | None = None) -> str:
    last = history[-1]
    top = max(history, key=lambda r: r["best"])
    saved = sum(value for _, value in numbers(history, "games_saved"))
    spent = counted(int(last["games"]), "training game") + (
        f" ({int(saved):,} saved by adaptive games)" if saved else "")
    validated = dict(numbers(history, "validated"))
    fitness = config["evaluation"]["fitness"]
    lines = [
        (f"run           {config['run']['name']}  ({player_text(config)}, depth "
        f"{config['search']['depth']}, fitness {fitness})"),
        (f"generations   {int(last['generation']):,}: "
         f"{counted(int(last['evaluations']), 'candidate')}, {spent}"),
        (f"best in a generation   {readable(top['best'])} "
         f"{plus_minus(Z95 * top['best_stderr'])} (generation {int(top['generation']):,})"),
        f"final sigma   {readable(last['sigma'], 3)}",
        *([cluster_line(machines, history, idle_rate)] if machines else []),
        f"({CI_NOTE})",
        "",
        f"{'gen':>5} {'games':>10} {'best':>12} {'+/-':>9} {'median':>12} {'worst':>12} "
        f"{'sigma':>8}" + (f" {'validated':>12}" if validated else ""),
    ]
    step = max(1, math.ceil(len(history) / 20))
    for row in history[::step] + ([last] if (len(history) - 1) % step else []):
        check = validated.get(row["games"])
        lines.append(
            f"{int(row['generation']):>5,} {int(row['games']):>10,} {readable(row['best']):>12} "
            f"{interval_cell(Z95 * row['best_stderr']):>9} {readable(row['median']):>12} "
            f"{readable(row['worst']):>12} {readable(row['sigma'], 3):>8}"
            + (f" {readable(check):>12}" if check is not None else "")
        )
    if validation:
        show_score = fitness != "mean_score"  # else the fitness column is the mean score
        lines += ["", "validation (held-out seeds)",
                  f"{'candidate':<20} {'gen':>4} {'fitness' if show_score else 'mean score':>12} "
                  f"{'+/-':>9}" + (f" {'mean score':>12} {'+/-':>9}" if show_score else "")]
        winner = validated_winner(validation, config)
        for row in validation:
            lines.append(
                f"{row['candidate']:<20} {int(row['generation']):>4,} "
                f"{readable(row['fitness']):>12} {interval_cell(Z95 * row['fitness_stderr']):>9}"
                + (f" {readable(row['mean_score']):>12} {interval_cell(row['ci95']):>9}"
                   if show_score else "") + ("  <- winner" if row is winner else "")
            )
        found = gains(validation, config)
        lines += [""] + [gain.words() for gain in found]
        if not any(gain.mark == START for gain in found):
            why = ("validation.start: false" if config.get("validation", {}).get("start") is False
                   else "a run of tune2048 before 0.4")
            lines.append(f"the start was not validated ({why}): no gain over it to judge")
    if best is None:
        lines += ["", "best.yaml     not kept: this directory holds the run's history only"]
        return "\n".join(lines)
    status = best.provenance.get("status", "")
    lines += ["", f"best.yaml     {status}"]
    lines += [f"  {name}: {readable(value, 6)}" for name, value in best.weights.items()]
    edges = space.edge_warnings(best.weights)
    lines += [f"warning: {line}" for line in edges]
    return "\n".join(lines)


def cluster_line(machines: list[dict], history: list[dict] = (),
                 idle_rate: float | None = None) -> str:
    """The machines' side of a run (``cluster.csv``), over every generation recorded: CPUs and
    wall time; the share of the CPUs' time on training games, also without generation 1, whose
    time includes starting the workers (loading the engine), so that the figure agrees with
    the generation lines after it; and the work done in idle cores' worth, where the run's
    ``status.json`` holds a one-core calibration (``tuner.games.throughput``)."""
    cpus = sorted({int(row["cpus"]) for row in machines})
    spread = f"{cpus[0]:,}" if len(cpus) == 1 else f"{cpus[0]:,}-{cpus[-1]:,}"
    wall = sum(row["seconds"] for row in machines)
    lines = [(f"cluster       {spread} CPU{'s' if cpus[-1] != 1 else ''}, "
             f"{counted(len(machines), 'generation')} recorded, {clock(wall)} of wall time")]
    on_games = f"{_share(machines):.0%} of their time on training games"
    if len(machines) > 1:
        on_games += (f" ({_share(machines[1:]):.0%} after generation 1, which includes "
                     "starting the workers)")
    lines.append(f"              {on_games}")
    positions = {row["generation"]: row["positions"] for row in history
                 if isinstance(row.get("positions"), float)}
    counted_rows = [row for row in machines if row["generation"] in positions]
    work = throughput.idle_cores(
        sum(throughput.positions_here(positions[row["generation"]], row["game_seconds"],
                                      _played_here(row)) for row in counted_rows),
        sum(row["seconds"] for row in counted_rows), idle_rate)
    if work is not None:
        lines.append(f"              the work of {work:.1f} idle cores (positions searched per "
                     "second, against one idle core's)")
    return "\n".join(lines)


def _share(machines: list[dict]) -> float:
    return throughput.share(sum(_played_here(row) for row in machines),
                            sum(_cpu_seconds(row) for row in machines))


def _played_here(row: dict) -> float:
    """The game-seconds a ``cluster.csv`` row's CPUs played in its wall time: its ``share`` of
    the CPU-seconds present. Its ``game_seconds`` also counts the games kept from an earlier
    sitting (0.5), which a resumed generation did not play in that time."""
    return row["share"] * _cpu_seconds(row)


def _cpu_seconds(row: dict) -> float:
    """The CPU-seconds a ``cluster.csv`` row's CPUs were present; a row of tune2048 before 0.4
    has no ``cpu_seconds``, and counted its CPUs at the generation's end."""
    present = row.get("cpu_seconds")
    return present if isinstance(present, float) else row["cpus"] * row["seconds"]


FITNESS_LABELS = {  # the fitness axis, by fitness name (tuner.games.fitness): what it measures, in what
    "mean_score": "mean score (points)",
    "reach_rate": "share of games reaching {tile}",
    "score_quantile": "score at quantile {quantile} (points)",
}


def fitness_label(evaluation: dict) -> str:
    """The label of a fitness axis, from a stored config's ``evaluation`` section."""
    name = evaluation["fitness"]
    return FITNESS_LABELS.get(name, name).format_map(defaultdict(lambda: "?", evaluation))


BEST_LABEL = "best of a generation (band: 95% CI)"


def plotting_problem() -> str | None:
    """Why this environment cannot draw the plot, with the command that installs what it
    lacks (from this checkout, or as tune2048 was installed); None where it can."""
    try:
        import matplotlib.figure  # noqa: F401 - the plot extra, loaded only when asked for
    except ImportError:
        return (f"matplotlib is not installed; install it with: "
                f"{installed.install_command('plot')}")
    return None


def plot_convergence(path: Path, history: list[dict], validation: list[dict],
                     config: dict) -> Path:
    """Write the convergence plot of a run (its stored ``config``) to ``path``, atomically."""
    png = io.BytesIO()  # rendered in memory, so only atomic_write touches the run directory
    convergence_figure(history, validation, config).savefig(png, format="png", dpi=110)
    atomic_write(path, png.getvalue())
    return path


def convergence_figure(history: list[dict], validation: list[dict], config: dict):
    """The convergence plot as a matplotlib ``Figure``, panels sharing the generation axis:
    fitness (the best with its 95% band, the median and the worst, the best guess validated
    during the run, the validated winner, and the marks the gain is judged against: a line at
    the validated fitness of the start and of a baseline reference, where the run validated
    them, the title saying whether the winner beat them: ``gains``); sigma, the step size; and
    the training games of each generation where they vary (adaptive games).
    Ticks as people read numbers (150,000, never 1.5e5 or an offset)."""
    # an optional dependency (the plot extra), loaded where a plot is drawn
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    gens = [r["generation"] for r in history]
    spent = [b["games"] - a["games"] for a, b in zip([{"games": 0.0}, *history], history)]
    varying = len(set(spent)) > 1  # adaptive games: a panel of their own
    fig = Figure(figsize=(10, 8.5 if varying else 7), layout="constrained")
    ax, sigma_ax, *games_ax = fig.subplots(3 if varying else 2, 1, sharex=True, height_ratios=(
        (3, 1, 1) if varying else (3, 1)))

    best = [r["best"] for r in history]
    ci = [Z95 * r["best_stderr"] if math.isfinite(r["best_stderr"]) else 0.0 for r in history]
    ax.fill_between(gens, [b - c for b, c in zip(best, ci)], [b + c for b, c in zip(best, ci)],
                    alpha=0.2, color="tab:blue")
    ax.plot(gens, best, color="tab:blue", label=BEST_LABEL)
    ax.plot(gens, [r["median"] for r in history], color="tab:orange",
            label="median of a generation")
    ax.plot(gens, [r["worst"] for r in history], ":", color="tab:gray",
            label="worst of a generation")
    checked = [(r["generation"], r["validated"]) for r in history
               if isinstance(r.get("validated"), float) and math.isfinite(r["validated"])]
    if checked:
        ax.plot(*zip(*checked), "o-", color="tab:red", label="best guess, validated during the run")
    winner = validated_winner(validation, config)
    if winner is not None:
        ax.errorbar([gens[-1]], [winner["fitness"]], yerr=[_half_width(winner)], fmt="*",
                    color="tab:red", markersize=12, capsize=4,
                    label=f"validated winner ({winner['candidate']}), 95% CI")
    start, baseline, _contenders = validation_parts(validation, config)
    reference = config.get("validation", {}).get("reference")
    for row, style in ((start, "--"), (baseline, "-.")):
        if row is None:
            continue
        ax.axhline(row["fitness"], linestyle=style, color="black",
                   label=f"{row['candidate']}, validated" + (
                       " (the reference)" if reference_label(reference) == row["candidate"]
                       else ""))
        half = _half_width(row)
        if half:
            ax.axhspan(row["fitness"] - half, row["fitness"] + half, color="black", alpha=0.08)
    verdicts = "\n".join(gain.words() for gain in gains(validation, config))
    ax.set_title(f"fitness by generation: {verdicts}" if verdicts else "fitness by generation")
    ax.set_ylabel(fitness_label(config["evaluation"]))
    sigma_ax.plot(gens, [r["sigma"] for r in history], color="tab:gray")
    sigma_ax.set_ylabel("sigma\n(share of each box)")
    bottom = sigma_ax
    if varying:
        bottom = games_ax[0]
        bottom.bar(gens, spent, color="tab:green", width=0.8)
        bottom.set_ylabel("training games")
        bottom.yaxis.set_major_formatter(FuncFormatter(_tick))
    bottom.set_xlabel("generation")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    for axis in (ax.yaxis, sigma_ax.yaxis):
        axis.set_major_formatter(FuncFormatter(_tick))
    handles, labels = ax.get_legend_handles_labels()  # below the panels, where it hides no data
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 3))
    fig.suptitle(f"{config['run']['name']}: {player_text(config)} at depth "
                 f"{config['search']['depth']}, fitness {config['evaluation']['fitness']}")
    return fig


def _half_width(row: dict) -> float:
    """The 95% half-width of a validation row's fitness; 0 where there is no interval."""
    half = Z95 * row["fitness_stderr"]
    return half if math.isfinite(half) else 0.0


def _tick(value: float, _position) -> str:
    """A tick label with thousands separators and no exponent (ticks are round numbers)."""
    return f"{value + 0.0:,.10g}"  # + 0.0: no "-0"
