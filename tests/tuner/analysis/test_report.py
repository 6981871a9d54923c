"""tuner.analysis.report: the summary as people read it, the convergence plot (labelled, readable, written
atomically, leaving no temporary file) and reading a run directory."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
import yaml

from engine import atomic
from engine.stats import Z95
from engine.weights_file import WeightsFile
from tuner.analysis.report import (
    HISTORY_COLUMNS,
    PLOT_FILE,
    VALIDATION_COLUMNS,
    convergence_figure,
    format_report,
    plot_convergence,
    read_rows,
)
from tuner.config import parse_config
from tuner.errors import CheckpointError
from tuner.space import SearchSpace

REPO_ROOT = Path(__file__).resolve().parents[3]

pytest.importorskip("matplotlib")

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
HISTORY = [
    {"generation": float(g), "evaluations": 6.0 * g, "games": 100.0 * g, "best": 1000.0 + 50 * g,
     "best_stderr": 20.0, "median": 900.0 + 40 * g, "worst": 500.0, "sigma": 0.3 / (g + 1),
     # as a run of 0.1.0 resumed by today's tune2048 writes them: the new columns are empty in
     # the first rows; validated every other generation
     "games_saved": 20.0 if g > 1 else "", "validated": 950.0 + 30 * g if g % 2 == 0 else ""}
    for g in range(1, 6)
]
VALIDATION = [{"candidate": "gen3-best", "generation": 3.0, "fitness": 1180.0,
               "fitness_stderr": 15.0}]
CONFIG = {"run": {"name": "r"}, "family": "classic", "search": {"depth": 1},
          "evaluation": {"fitness": "mean_score"}}


@pytest.mark.parametrize("validation", [VALIDATION, []], ids=["validated", "unvalidated"])
def test_the_plot_is_a_png_and_no_temporary_file_remains(tmp_path, validation):
    path = plot_convergence(tmp_path / PLOT_FILE, HISTORY, validation, CONFIG)
    assert path == tmp_path / PLOT_FILE
    assert path.read_bytes().startswith(PNG_SIGNATURE)
    assert os.listdir(tmp_path) == [PLOT_FILE]


def test_the_plot_has_the_mode_of_the_other_run_files(tmp_path):
    saved = os.umask(0o022)
    try:
        path = plot_convergence(tmp_path / PLOT_FILE, HISTORY, VALIDATION, CONFIG)
    finally:
        os.umask(saved)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_the_plot_names_the_run_and_its_units_and_reads_numbers_as_people_write_them():
    history = [{**row, "best": 150_000.0 + row["best"], "games": 10_000.0 * row["generation"]}
               for row in HISTORY]
    figure = convergence_figure(history, VALIDATION, CONFIG)
    assert figure.get_suptitle() == "r: classic family at depth 1, fitness mean_score"
    fitness, sigma = figure.axes  # the games of a generation do not vary: no panel for them
    assert fitness.get_ylabel() == "mean score (points)"
    assert sigma.get_xlabel() == "generation" and sigma.get_ylabel().startswith("sigma")
    # ticks with thousands separators and neither an exponent nor an offset ("1e5") above them
    assert fitness.yaxis.get_major_formatter()(150_000.0, 0) == "150,000"
    figure.canvas.draw()
    assert fitness.yaxis.get_offset_text().get_text() == ""
    assert "," in fitness.get_yticklabels()[-1].get_text()
    # one legend, for the figure, below the panels: none over the data
    assert [ax.get_legend() for ax in figure.axes] == [None] * 2 and len(figure.legends) == 1
    assert "validated winner (gen3-best), 95% CI" in [
        t.get_text() for t in figure.legends[0].get_texts()]


def lines_by_label(axes) -> dict:
    return {line.get_label(): line for line in axes.get_lines()}


def test_the_fitness_panel_shows_the_spread_and_the_best_guesses_validated_by_generation():
    fitness = convergence_figure(HISTORY, VALIDATION, CONFIG).axes[0]
    lines = lines_by_label(fitness)
    assert list(lines["worst of a generation"].get_ydata()) == [500.0] * 5
    validated = lines["best guess, validated during the run"]
    assert list(validated.get_xdata()) == [2.0, 4.0]  # by generation, as every other line
    assert list(validated.get_ydata()) == [1010.0, 1070.0]
    assert fitness.get_title() == "fitness by generation"  # no reference: no gain to state
    assert not any("reference" in label for label in lines)


START_ROW = {"candidate": "start", "generation": 0.0, "fitness": 1000.0, "fitness_stderr": 10.0}


def paired(row: dict, vs_start: float, stderr: float) -> dict:
    """A row as a run of 0.4 writes it: its fitness less the start's, paired, beside it."""
    return {**row, "vs_start": vs_start, "vs_start_stderr": stderr}


@pytest.mark.parametrize(("start", "title"), [
    (1000.0, "fitness by generation: the winner beat the start (+180 +/- 35.33, unpaired)"),
    (1200.0, ("fitness by generation: the start beat the winner (-20 +/- 17.64, paired on the "
              "same 8 games)")),
])
def test_the_start_is_a_line_to_judge_the_gain_against_and_never_the_winner(start, title):
    """A run of 0.3 named the start as its reference and kept no paired difference: judged from
    the rows' own errors; a run of 0.4 from the pairs of games."""
    config = {**CONFIG, "validation": {"games": 8, "reference": "start"}}
    winner = VALIDATION[0] if start == 1000.0 else paired(VALIDATION[0], -20.0, 9.0)
    figure = convergence_figure(HISTORY, [winner, {**START_ROW, "fitness": start}], config)
    fitness = figure.axes[0]
    reference = lines_by_label(fitness)["start, validated (the reference)"]
    assert list(reference.get_ydata()) == [start, start]  # across the whole panel
    assert reference.get_linestyle() == "--"
    [band] = [patch for patch in fitness.patches]  # its 95% interval
    assert band.get_y() == pytest.approx(start - Z95 * 10.0)
    assert band.get_height() == pytest.approx(2 * Z95 * 10.0)
    winners = [t.get_text() for t in figure.legends[0].get_texts() if "winner" in t.get_text()]
    assert winners == ["validated winner (gen3-best), 95% CI"]  # even below the start
    assert fitness.get_title() == title


def test_every_run_of_0_4_draws_its_start_and_says_within_noise_where_the_gain_is():
    """The issue's run: 76,989 +/- 10,856 against a start of 67,332 +/- 8,198 was titled "the
    winner is 9,657 above start"; its paired interval holds 0: within noise, said so."""
    validation = [paired({"candidate": "distribution mean", "generation": 30.0,
                          "fitness": 76_989.0, "fitness_stderr": 10_856.0 / Z95}, 9_657.0, 6_000.0),
                  paired({**START_ROW, "fitness": 67_332.0, "fitness_stderr": 8_198.0 / Z95},
                         0.0, 0.0)]
    figure = convergence_figure(HISTORY, validation, {**CONFIG, "validation": {"games": 500}})
    fitness = figure.axes[0]
    assert list(lines_by_label(fitness)["start, validated"].get_ydata()) == [67_332.0] * 2
    assert fitness.get_title() == (
        "fitness by generation: the winner did not beat the start: within noise (+9,657 "
        "+/- 11,760, paired on the same 500 games)")


def test_a_baseline_reference_is_a_second_mark_beside_the_start():
    config = {**CONFIG, "validation": {"games": 8, "reference": "classic-reference"}}
    baseline = {**START_ROW, "candidate": "baseline classic-reference", "fitness": 1100.0}
    figure = convergence_figure(HISTORY, [paired(VALIDATION[0], 180.0, 5.0),
                                          paired(START_ROW, 0.0, 0.0), baseline], config)
    lines = lines_by_label(figure.axes[0])
    assert lines["start, validated"].get_linestyle() == "--"
    assert lines["baseline classic-reference, validated (the reference)"].get_linestyle() == "-."
    assert figure.axes[0].get_title().splitlines() == [
        ("fitness by generation: the winner beat the start (+180 +/- 9.8, paired on the same 8 "
         "games)"),
        "the winner beat the baseline classic-reference (+80 +/- 35.33, unpaired)"]
    winners = [t.get_text() for t in figure.legends[0].get_texts() if "winner" in t.get_text()]
    assert winners == ["validated winner (gen3-best), 95% CI"]  # the baseline never wins


def test_the_games_of_each_generation_get_a_panel_where_they_vary():
    history = [{**row, "games": 100.0 * row["generation"] - (30.0 if row["generation"] > 2
                                                              else 0.0)}
               for row in HISTORY]  # adaptive games: generation 3 played 70, the others 100
    _fitness, sigma, games = convergence_figure(history, [], CONFIG).axes
    assert [bar.get_height() for bar in games.patches] == [100.0, 100.0, 70.0, 100.0, 100.0]
    assert games.get_ylabel() == "training games" and games.get_xlabel() == "generation"
    assert sigma.get_xlabel() == ""


@pytest.mark.parametrize(("evaluation", "label"), [
    ({"fitness": "reach_rate", "tile": 2048}, "share of games reaching 2048"),
    ({"fitness": "score_quantile", "quantile": 0.25}, "score at quantile 0.25 (points)"),
])
def test_the_fitness_axis_says_what_the_fitness_measures(evaluation, label):
    figure = convergence_figure(HISTORY, [], {**CONFIG, "evaluation": evaluation})
    assert figure.axes[0].get_ylabel() == label


def test_a_failed_write_keeps_the_old_plot_and_leaves_nothing_behind(tmp_path, monkeypatch):
    (tmp_path / PLOT_FILE).write_bytes(b"the old plot")

    def failing_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        plot_convergence(tmp_path / PLOT_FILE, HISTORY, VALIDATION, CONFIG)
    assert (tmp_path / PLOT_FILE).read_bytes() == b"the old plot"
    assert os.listdir(tmp_path) == [PLOT_FILE]


# ---- reading a run directory -------------------------------------------------------------------

HEADER = "generation,evaluations,games,best,best_stderr,median,worst,sigma,popsize\n"
ROW = "1,6,144,1000.5,20.0,900.0,500.0,0.25,6\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (HEADER + ROW + ROW[:9], "line 3: expected 9 fields, got 4 (a truncated or damaged line)"),
        (HEADER + ROW.replace("\n", ",7\n"), "line 2: expected 9 fields, got 10"),
        (HEADER.replace("sigma", "sigma0") + ROW, "line 1: missing column 'sigma'"),
        (HEADER + ROW.replace("1000.5", "lots"),
         "line 2: best: expected a number from -1e300 to 1e300, got 'lots'"),
        (HEADER + ROW.replace("1,6,", "1.5,6,"), "line 2: generation: expected a whole number"),
        (HEADER + ROW.replace("1,6,", "inf,6,"), "line 2: generation: expected a whole number"),
        ("", "empty: no generation has completed yet"),
    ],
)
def test_a_damaged_history_is_refused_naming_the_line(tmp_path, text, message):
    path = tmp_path / "history.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CheckpointError) as caught:
        read_rows(path, HISTORY_COLUMNS, required=True)
    assert str(caught.value).startswith(f"{path}: {message}")


def test_a_history_with_every_column_is_read(tmp_path):
    path = tmp_path / "history.csv"
    path.write_text(HEADER + ROW, encoding="utf-8")
    assert read_rows(path, HISTORY_COLUMNS, required=True) == [
        {"generation": 1.0, "evaluations": 6.0, "games": 144.0, "best": 1000.5,
         "best_stderr": 20.0, "median": 900.0, "worst": 500.0, "sigma": 0.25, "popsize": 6.0}]


def test_a_missing_optional_file_is_no_rows(tmp_path):
    assert read_rows(tmp_path / "validation.csv", VALIDATION_COLUMNS, required=False) == []


def test_report_reads_a_run_of_a_family_file_from_any_directory(tmp_path, monkeypatch, capsys):
    import shutil

    import yaml

    from tuner.cli.main import main
    from tuner.config import parse_config
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.run import TuningRun

    examples = Path(__file__).resolve().parents[3] / "examples" / "families"
    shutil.copyfile(examples / "seed001.py", tmp_path / "seed001.py")
    document = yaml.safe_load((examples / "seed001.yaml").read_text(encoding="utf-8"))
    document["run"]["output_dir"] = str(tmp_path / "runs")
    document["search"]["depth"] = 0
    document["evaluation"]["games"] = 2
    document["cmaes"].update(popsize=4, max_generations=1)
    document["validation"] = {"games": 2, "top_k": 1}
    config = parse_config(document, "seed001.yaml", tmp_path)
    TuningRun.start(config, config.run_dir, progress=False).run(SerialEvaluator(2))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    assert main(["report", str(config.run_dir), "--no-plot"]) == 0
    out = capsys.readouterr().out
    assert "seed001.py:Seed001 family" in out and "best.yaml     validated" in out
    # the start, validated on the same games, and the verdict paired over them
    assert re.search(r"^start +0 ", out, re.MULTILINE)
    assert re.search(r"^the (winner|start) .*, paired on the same 2 games\)$", out, re.MULTILINE)


def quick_space_and_best() -> tuple[SearchSpace, WeightsFile]:
    space = SearchSpace(parse_config(
        yaml.safe_load((REPO_ROOT / "configs" / "quick.yaml").read_text()), "quick").params)
    return space, WeightsFile("classic", space.weights(space.initial()), 1,
                              {"status": "validated"})


def test_the_summary_says_what_adaptive_games_saved_and_what_was_validated(tmp_path):
    space, best = quick_space_and_best()
    text = format_report(CONFIG, HISTORY, [], best, space)
    assert "500 training games (80 saved by adaptive games)" in text
    rows = {line.split()[0]: line.split() for line in text.splitlines()
            if line.split() and line.split()[0].isdigit()}
    assert len(rows["2"]) == 8 and rows["2"][-1] == "1,010"  # validated in generation 2
    assert len(rows["3"]) == 7  # not in generation 3


def test_the_summary_gives_95_percent_intervals_in_numbers_people_read():
    space, best = quick_space_and_best()
    history = [{**row, "best": 33_820.0 + row["best"], "best_stderr": 1_500.0}
               for row in HISTORY]
    validation = [{**VALIDATION[0], "fitness": 33_820.0, "fitness_stderr": 1_500.0,
                   "mean_score": 33_820.0, "ci95": 2_940.0}]
    text = format_report(CONFIG, history, validation, best, space)
    assert "e+" not in text and "1.5e" not in text
    assert "(+/- is the half-width of a 95% confidence interval; - where there is none" in text
    assert "best in a generation   35,070 +/- 2,940 (generation 5)" in text  # 1.96 x 1,500
    row = text.splitlines()[text.splitlines().index("validation (held-out seeds)") + 2]
    assert row.split() == ["gen3-best", "3", "33,820", "2,940", "<-", "winner"]


def test_the_summary_shows_no_interval_for_one_game_or_no_spread():
    """One game a candidate writes an infinite standard error; games that all came out the same
    (a reach rate of 1) a zero one: neither is an interval, and the report says so."""
    space, best = quick_space_and_best()
    history = [{**row, "best_stderr": float("inf") if row["generation"] < 5 else 0.0}
               for row in HISTORY]
    validation = [{**VALIDATION[0], "fitness_stderr": float("inf"), "mean_score": 1180.0,
                   "ci95": 0.0}]
    text = format_report({**CONFIG, "evaluation": {"fitness": "reach_rate"}}, history,
                         validation, best, space)
    assert "inf" not in text and "+/- 0" not in text
    assert "best in a generation   1,250 (no spread: no interval) (generation 5)" in text
    assert "- where there is none: one game, or games that all came out the same" in text
    rows = [line.split() for line in text.splitlines() if line.split()[:1] in (["1"], ["5"])]
    assert [row[3] for row in rows] == ["-", "-"]  # the +/- column
    row = text.splitlines()[text.splitlines().index("validation (held-out seeds)") + 2]
    assert row.split() == ["gen3-best", "3", "1,180", "-", "1,180", "-", "<-", "winner"]


def summary_verdicts(validation: list[dict], validation_config: dict,
                     fitness: str = "mean_score") -> list[str]:
    """The lines of the summary between the validation table and best.yaml's."""
    space, best = quick_space_and_best()
    config = {**CONFIG, "evaluation": {"fitness": fitness}, "validation": validation_config}
    lines = format_report(config, HISTORY, validation, best, space).splitlines()
    table = lines.index("validation (held-out seeds)") + 2 + len(validation)
    return lines[table:lines.index("best.yaml     validated")]


def test_the_summary_marks_the_winner_and_says_whether_it_beat_the_start():
    elite = {**VALIDATION[0], "candidate": "elite 1", "mean_score": 1000.0, "ci95": 1.0}
    start = {**START_ROW, "mean_score": 1.0, "ci95": 1.0}
    validation = [paired(elite, -80.0, 15.0),
                  paired({**elite, "candidate": "distribution mean", "fitness": 1250.0}, -10.0,
                         30.0),
                  paired({**start, "fitness": 1260.0}, 0.0, 0.0)]
    space, best = quick_space_and_best()
    text = format_report({**CONFIG, "validation": {"games": 500}}, HISTORY, validation, best,
                         space)
    marked = [line.split()[0] for line in text.splitlines() if line.endswith("<- winner")]
    assert marked == ["distribution"]  # the start never wins, even above every candidate
    # the gain's 95% interval holds 0: said so, with the sign as it came out
    assert summary_verdicts(validation, {"games": 500}) == [
        "", ("the winner did not beat the start: within noise (-10 +/- 58.8, paired on the same "
             "500 games)"), ""]
    assert summary_verdicts([paired(elite, 90.0, 30.0), paired({**start, "fitness": 1090.0},
                                                                 0.0, 0.0)],
                            {"games": 500}, "reach_rate")[1] == (
        "the winner beat the start (+90 +/- 58.8, paired on the same 500 games)")


def test_the_summary_says_where_the_start_was_not_validated():
    assert summary_verdicts(VALIDATION, {"games": 8})[1] == (
        "the start was not validated (a run of tune2048 before 0.4): no gain over it to judge")
    assert summary_verdicts(VALIDATION, {"games": 8, "start": False})[1] == (
        "the start was not validated (validation.start: false): no gain over it to judge")


def test_a_run_that_keeps_only_its_history_is_summarised_without_weights():
    space, _best = quick_space_and_best()
    text = format_report(CONFIG, HISTORY, [], None, space)
    assert text.splitlines()[-1] == ("best.yaml     not kept: this directory holds the run's "
                                     "history only")
    assert "500 training games" in text


@pytest.mark.parametrize(("keep", "summarised"), [
    ((), True),  # config and history only: a campaign's seed run as shipped
    (("validation.csv",), False),  # a validated run wrote its best.yaml: it was lost
    (("checkpoint.pkl",), False),  # so did a run with a checkpoint
])
def test_a_missing_best_is_history_only_or_damage(tmp_path, capsys, keep, summarised):
    import shutil

    from tuner.cli.main import main

    run_dir = tmp_path / "run"
    source = REPO_ROOT / "tests" / "data" / "bad" / "report-best-missing"
    run_dir.mkdir()
    for name in ("config.yaml", "history.csv", *keep):
        if (source / name).exists():
            shutil.copy(source / name, run_dir / name)
        else:
            (run_dir / name).write_bytes(b"")
    status = main(["report", str(run_dir)])
    captured = capsys.readouterr()
    if summarised:
        assert status == 0 and captured.out.rstrip().endswith("history only")
    else:
        assert status == 2 and f"{run_dir / 'best.yaml'}: cannot read weights file" in captured.err


def test_the_summary_counts_in_the_singular_when_there_is_one():
    space, best = quick_space_and_best()
    one = [{**HISTORY[0], "generation": 1.0, "evaluations": 1.0, "games": 1.0, "games_saved": ""}]
    text = format_report(CONFIG, one, [], best, space)
    assert "generations   1: 1 candidate, 1 training game" in text
