"""What a run shows a person: no warning at start, one progress bar per generation on a terminal
and plain lines a minute apart off one, log lines whose +/- is a 95% confidence interval and
whose numbers read as people write them, and one line when a run resumes."""

from __future__ import annotations

import io
import logging
import math
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import JobsEvaluator

from engine.solver import GameResult
from engine.stats import Z95, counted, readable
from tuner.cli.job import show_progress
from tuner.cli.main import parse
from tuner.config import parse_config
from tuner.games import progress
from tuner.games.progress import GameBar, said_if_slow
from tuner.loop.observers import ProgressBars
from tuner.loop.run import TuningRun
from tuner.store import checkpoint as ckpt

WITHOUT_MATPLOTLIB = "import sys; sys.modules['matplotlib'] = None; "  # import raises ImportError


def config_dict(tmp_path: Path, games=4, **cmaes) -> dict:
    return {
        "run": {"name": "t", "output_dir": str(tmp_path), "seed": 7},
        "family": "classic",
        "params": {
            "lost_penalty": {"fixed": 200000},
            "merges_weight": {"init": 100, "low": 10, "high": 10000, "scale": "log"},
            "empty_weight": {"init": 50, "low": 10, "high": 10000, "scale": "log"},
        },
        "search": {"depth": 0, "cutoff": 0.0},
        "evaluation": {"games": games},
        "cmaes": {"sigma0": 0.3, "popsize": 6, "max_generations": 2, **cmaes},
        "validation": {"games": 8, "top_k": 2},
    }


class Synthetic(JobsEvaluator):
    """Scores of about 100,000 from the weights and the seed, with no games played."""

    workers = 1

    def play(self, jobs, progress=None):
        out = []
        for job in jobs:
            base = 50_000 + 100 * job.spec.weights["merges_weight"] % 90_000
            out.append([GameResult(seed, int(base + seed % 9_973), 2048, 100, 0.001, 1000, 0)
                        for seed in job.seeds])
            if progress:
                progress(len(job.seeds))
        return out


class Slow(Synthetic):
    """Each candidate's games reported after tqdm's refresh interval, so the bar shows them."""

    def play(self, jobs, progress=None):
        def report(games):
            time.sleep(0.11)
            progress(games)

        return super().play(jobs, report)


class Terminal(io.StringIO):
    """A stream that says it is a terminal, as stderr does in a shell."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A monotonic clock that moves only when told."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def bar_lines(text: str) -> list[str]:
    """What a bar showed, one state per item (tqdm redraws a line after a carriage return)."""
    return [line.strip() for line in text.split("\r") if line.strip()]


def run_with_bars(tmp_path: Path, doc: dict) -> tuple[TuningRun, list[str]]:
    run = TuningRun.start(parse_config(doc, "test"), tmp_path / "t", progress=True)
    run.progress_file = Terminal()
    run.run(Slow())
    return run, bar_lines(run.progress_file.getvalue())


# ---- the pycma warning ---------------------------------------------------------------------------

def python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True,
                          text=True, timeout=300, check=True)


@pytest.mark.subprocess
def test_without_matplotlib_the_strategy_imports_pycma_without_a_warning():
    # the condition a user without the plot extra is in: pycma itself warns in it...
    assert "Could not import matplotlib" in python(WITHOUT_MATPLOTLIB + "import cma").stderr
    # ...and tune2048 does not pass the warning on
    assert python(WITHOUT_MATPLOTLIB + "import tuner.strategies").stderr == ""


@pytest.mark.subprocess
def test_pycma_is_loaded_without_matplotlib_which_a_later_import_still_finds():
    """pycma loads pyplot as it imports (a second of every run's start); tune2048 keeps it out,
    silently, and leaves matplotlib importable for the report's plots."""
    done = python(
        "import sys; from tuner.strategies.pycma_es import pycma; cma = pycma(); "
        "print('matplotlib' in sys.modules, cma.s._pyplot is None); "
        "import matplotlib.pyplot; print(pycma() is cma)")
    assert done.stdout.split() == ["False", "True", "True"] and done.stderr == ""


# ---- the progress bars ---------------------------------------------------------------------------

def test_one_bar_per_generation_counts_its_games_and_validation_has_its_own(tmp_path):
    _, lines = run_with_bars(tmp_path, config_dict(tmp_path))
    # 6 candidates x 4 games per generation; 2 elites, the mean and the start x 8 validation games
    assert {line.split(":")[0] for line in lines} == {"gen 1 of 2", "gen 2 of 2", "validation"}
    assert lines[0].startswith("gen 1 of 2:   0%|")
    assert lines[0].endswith("| 0/24 games [00:00 elapsed, ? left, ? games/s]")
    done = [line for line in lines if line.startswith("gen 1 of 2: 100%|")]
    assert done and re.search(r"\| 24/24 games \[00:0\d elapsed, 00:00 left, [\d.,]+ games/s\]$",
                              done[-1]), lines
    assert any(line.startswith("validation: 100%|") and "| 32/32 games" in line for line in lines)


def test_under_a_race_the_bar_says_its_total_is_an_upper_bound_and_counts_rounds(tmp_path):
    doc = config_dict(tmp_path, games={"min": 2, "max": 8, "batch": 2}, max_generations=1)
    run, lines = run_with_bars(tmp_path, doc)
    # every candidate at max: 6 x 8 games, which the race stops short of
    assert lines[0].endswith("| 0 of up to 48 games [00:00 elapsed, at most ? left, ? games/s]")
    assert lines[0].startswith("gen 1 of 1, round 1:   0%|")
    rounds = {int(m.group(1)) for line in lines if (m := re.match(r"gen 1 of 1, round (\d+):", line))}
    assert len(rounds) > 1 and rounds == set(range(1, max(rounds) + 1)), lines
    played = run.state.history[0]["games"]
    assert played < 48 and any(f" {played} of up to 48 games" in line for line in lines), lines


def test_the_bar_writes_counts_with_thousands_separators():
    out = Terminal()
    with GameBar("gen 3 of 50, round 2", 15_360, up_to=True, file=out) as bar:
        bar.update(6_200)
        bar.refresh()
    assert "\r" in out.getvalue() and "6,200 of up to 15,360 games" in out.getvalue()


# ---- off a terminal: plain lines -----------------------------------------------------------------

def test_off_a_terminal_games_are_plain_lines_first_after_seconds_then_every_minute():
    out, clock = io.StringIO(), Clock()  # a log file: not a terminal
    bar = GameBar("gen 1 of 20", 1_200, file=out, clock=clock)
    clock.now += progress.FIRST_LINE_SECONDS - 1
    bar.update(10)
    assert out.getvalue() == ""  # a phase this short shows nothing: its end is said anyway
    clock.now += 1
    bar.update(30)
    clock.now += 59
    bar.tick()
    assert out.getvalue().splitlines() == [
        "gen 1 of 20: 40 of 1,200 games (3%), 0:00:04 elapsed, 10 games/s, 0:01:56 left"]
    clock.now += 1  # a minute after the last line: another, with no game finished meanwhile
    bar.tick()
    clock.now += 30
    bar.tick()
    bar.close()
    clock.now += 600
    bar.tick()
    lines = out.getvalue().splitlines()
    assert lines[1:] == [("gen 1 of 20: 40 of 1,200 games (3%), 0:01:04 elapsed, "
                          "0.625 games/s, 0:30:56 left")]
    assert "\r" not in out.getvalue()


def test_games_found_kept_count_as_done_but_not_in_the_games_per_second():
    out, clock = io.StringIO(), Clock()
    bar = GameBar("gen 2 of 3", 256, file=out, clock=clock)
    bar.found(100)  # kept from the last sitting: found at once
    clock.now += progress.FIRST_LINE_SECONDS
    bar.update(2)
    assert out.getvalue().splitlines() == [
        "gen 2 of 3: 102 of 256 games (40%), 0:00:04 elapsed, 0.5 games/s, 0:05:08 left"]
    terminal = Terminal()
    with GameBar("gen 2 of 3", 256, file=terminal) as shown:
        shown.found(100)
        shown.refresh()
    assert "100/256 games" in terminal.getvalue()
    assert "? games/s" in terminal.getvalue()  # none played yet: no speed, not 100 in no time


def test_off_a_terminal_a_race_counts_up_to_its_most_games_under_its_rounds_names():
    out, clock = io.StringIO(), Clock()
    bar = GameBar("gen 2 of 5, round 1", 4_096, up_to=True, file=out, clock=clock)
    clock.now += progress.FIRST_LINE_SECONDS
    bar.tick()  # no game yet: no rate, no time left
    bar.set_description_str("gen 2 of 5, round 2")
    bar.update(1_024)
    clock.now += progress.LINE_SECONDS
    bar.tick()
    assert out.getvalue().splitlines() == [
        "gen 2 of 5, round 1: 0 of up to 4,096 games (0%), 0:00:04 elapsed",
        ("gen 2 of 5, round 2: 1,024 of up to 4,096 games (25%), 0:01:04 elapsed, 16 games/s, "
         "at most 0:03:12 left")]


def test_progress_off_a_terminal_says_each_phase_of_a_run_in_lines():
    """The run's observer: every phase (a generation, validation) gets its own lines."""
    out, clock = io.StringIO(), Clock()
    bars = ProgressBars(file=out, clock=clock)
    for label, total in (("gen 1 of 2", 24), ("validation", 32)):
        bars.games_started(label, total, False)
        clock.now += progress.FIRST_LINE_SECONDS
        bars.games_played(8)
        bars.games_ended()
        clock.now += progress.LINE_SECONDS
        bars.games_played(0)  # a phase that has ended says nothing more
    assert [line.split(",")[0] for line in out.getvalue().splitlines()] == [
        "gen 1 of 2: 8 of 24 games (33%)", "validation: 8 of 32 games (25%)"]


def test_a_quiet_run_shows_no_progress_and_any_other_shows_it_off_a_terminal_too():
    assert show_progress(parse(["run", "c.yaml"])) is True
    assert show_progress(parse(["run", "c.yaml", "--quiet"])) is False
    out = io.StringIO()
    bar = GameBar("play", 100, file=out, enabled=False, clock=Clock())
    bar.update(100)
    bar.refresh()
    assert out.getvalue() == "" and bar.n == 0


def test_a_wait_is_said_once_it_lasts_and_not_when_it_ends_sooner():
    said, heard = [], threading.Event()

    def say(line: str) -> None:
        said.append(line)
        heard.set()

    with said_if_slow("starting Ray on this machine", seconds=0.0, say=say):
        assert heard.wait(30)  # the block waits until the line is said
    with said_if_slow("compiling the engine", seconds=600.0, say=say):
        pass
    assert said == ["starting Ray on this machine"]


def test_a_run_without_progress_writes_no_bar(tmp_path):
    run = TuningRun.start(parse_config(config_dict(tmp_path), "test"), tmp_path / "t",
                          progress=False)
    run.progress_file = io.StringIO()
    run.run(Synthetic())
    assert run.progress_file.getvalue() == ""


# ---- log lines -----------------------------------------------------------------------------------

class Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def logged():
    records = Records()
    logger = logging.getLogger("tuner.loop.run")  # "tuner" may not propagate: listen here
    level = logger.level
    logger.addHandler(records)
    logger.setLevel(logging.INFO)
    yield records.lines
    logger.removeHandler(records)
    logger.setLevel(level)


def test_generation_lines_give_a_95_percent_interval_in_readable_numbers(tmp_path, logged):
    run = TuningRun.start(parse_config(config_dict(tmp_path), "test"), tmp_path / "t",
                          progress=False)
    state = run.run(Synthetic())
    lines = [line for line in logged if line.startswith("gen ")]
    assert len(lines) == 2
    for line, row in zip(lines, state.history):
        assert row["best"] >= 1000  # so the separator shows
        assert (f"best {readable(row['best'])} +/- {readable(Z95 * row['best_stderr'])} "
                "(95% CI)") in line
        assert re.search(r"best \d{1,3}(,\d{3})+ ", line) and "e+" not in line
    validation = [line for line in logged if line.startswith("validation")]
    assert validation[0] == "validation on 8 held-out games each (+/-: 95% confidence interval)"
    assert len(validation) == 6 and all("mean score" in line for line in validation[1:-1])
    assert validation[-1].startswith("validation  the winner beat the start (+")


def test_one_game_a_candidate_shows_no_interval(tmp_path, logged):
    """One game a candidate has no spread to estimate an interval from (its standard error is
    infinite): the lines say so instead of "+/- inf"."""
    config = config_dict(tmp_path, games=1)
    config["validation"]["games"] = 1
    TuningRun.start(parse_config(config, "test"), tmp_path / "t", progress=False).run(Synthetic())
    lines = [line for line in logged if line.startswith(("gen ", "validation"))]
    assert lines[2] == "validation on 1 held-out game each"
    del lines[2]
    assert len(lines) == 7 and "inf" not in "".join(lines) and "+/-" not in "".join(lines)
    assert all(re.search(r"best [\d,]+ \(one game: no interval\)  median", line)
               for line in lines[:2])
    assert all(re.search(r"mean score [\d,]+ \(one game: no interval\)", line)
               for line in lines[2:-1])
    assert re.search(r"start: within noise \(\+[\d,]+ \(one game: no interval\), paired on "
                     r"the same 1 game\)$", lines[-1])  # one pair of games tells no gain from noise


def test_the_reference_is_validated_beside_the_candidates_and_never_wins(tmp_path, logged):
    config = config_dict(tmp_path)
    config["params"]["merges_weight"]["init"] = 899  # Synthetic's best score: the start wins all
    config["validation"]["reference"] = "start"
    run = TuningRun.start(parse_config(config, "test"), tmp_path / "t", progress=False)
    run.run(Synthetic())
    rows = (tmp_path / "t" / ckpt.VALIDATION_FILE).read_text().splitlines()
    assert [row.split(",")[0] for row in rows[1:]] == [
        "elite 1", "elite 2", "distribution mean", "start"]
    assert rows[-1].split(",")[1] == "0"  # the start is no generation's
    assert float(rows[-1].split(",")[2]) > max(float(row.split(",")[2]) for row in rows[1:-1])
    [start] = [line for line in logged if line.startswith("validation  start")]
    assert "winner" not in start
    best = (tmp_path / "t" / ckpt.BEST_FILE).read_text()
    assert "candidate: elite" in best or "candidate: distribution mean" in best


def start_and_stop(tmp_path: Path, logged: list[str], **cmaes) -> TuningRun:
    """A run stopped after one generation, resumed with ``cmaes`` changed; the resumed run."""
    first = parse_config(config_dict(tmp_path, max_generations=1), "test")
    TuningRun.start(first, tmp_path / "t", progress=False).run(Synthetic())
    assert not [line for line in logged if line.startswith("resumed")]  # a new run: no such line
    config = parse_config(config_dict(tmp_path, **cmaes), "test")
    run = TuningRun.resume(config, tmp_path / "t", ckpt.load_state(tmp_path / "t"),
                           progress=False)
    run.run(Synthetic())
    return run


def test_a_resumed_run_says_where_it_stands_once(tmp_path, logged):
    start_and_stop(tmp_path, logged, max_generations=3)
    assert [line for line in logged if line.startswith("resumed")] == [
        "resumed run t at generation 1 of 3, 24 games so far"]


def test_a_resumed_run_without_a_generation_limit_says_so(tmp_path, logged):
    start_and_stop(tmp_path, logged, max_generations=None, max_games=40)
    assert [line for line in logged if line.startswith("resumed")] == [
        "resumed run t at generation 1 (no generation limit), 24 games so far"]


# ---- numbers and counts --------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("value", "digits", "shown"),
    [(33_820.4, 4, "33,820"), (3_382_000.0, 4, "3,382,000"), (0.132, 3, "0.132"),
     (0.13245, 3, "0.132"), (11.234, 4, "11.23"), (0.5, 4, "0.5"), (1.0, 4, "1"),
     (150.34, 4, "150.3"), (-4_567.8, 4, "-4,568"), (0.0, 4, "0"), (math.inf, 4, "inf"),
     (2e-9, 3, "2e-09")],
)
def test_numbers_read_as_people_write_them(value, digits, shown):
    assert readable(value, digits) == shown


@pytest.mark.parametrize(("count", "shown"),
                         [(1, "1 game"), (0, "0 games"), (2, "2 games"), (1536, "1,536 games")])
def test_counts_agree_with_their_noun(count, shown):
    assert counted(count, "game") == shown
