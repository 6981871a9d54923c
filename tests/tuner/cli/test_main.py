"""tuner.cli.main: the short forms, options before or after a subcommand, help, and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import BadInput, Failure, Tune2048Error
from tuner.cli import resume, run
from tuner.cli.main import build_parser, main, parse
from tuner.cli.options import UsageError

ROOT = Path(__file__).resolve().parents[3]


def test_the_short_form_is_tune_run_with_the_same_options():
    short = parse(["--config", "c.yaml", "--workers", "3", "--overwrite", "--quiet"])
    long = parse(["run", "c.yaml", "--workers", "3", "--overwrite", "--quiet"])
    for args in (short, long):
        assert (args.command, args.handler) == ("run", run.handle)
        assert (args.config, args.workers, args.address, args.overwrite, args.quiet) == (
            "c.yaml", 3, None, True, True)


def test_the_resume_short_form_takes_an_edited_config():
    args = parse(["--resume", "outputs/x", "--config", "edited.yaml", "--address", "auto"])
    assert (args.command, args.handler) == ("resume", resume.handle)
    assert (args.run_dir, args.config, args.address) == ("outputs/x", "edited.yaml", "auto")
    assert parse(["resume", "outputs/x", "--config", "e.yaml"]).config == "e.yaml"


def test_overwrite_does_not_go_with_resume():
    with pytest.raises(UsageError, match="--overwrite starts a new run"):
        parse(["--resume", "outputs/x", "--overwrite"])


@pytest.mark.parametrize("argv", [
    ["--workers", "4", "compare", "a.yaml", "b.yaml"],
    ["--config", "c.yaml", "play"],
    ["--resume", "outputs/x", "report", "outputs/x"],
    ["--overwrite", "run", "c.yaml"],
])
def test_short_form_options_before_a_subcommand_are_refused(argv):
    command = argv[2] if argv[0] != "--overwrite" else "run"
    with pytest.raises(UsageError, match=f"before '{command}'.*tune {command} --help"):
        parse(argv)


@pytest.mark.parametrize("where", ["before", "after"])
def test_verbosity_goes_before_or_after_the_subcommand(where):
    argv = ["--quiet", "families"] if where == "before" else ["families", "--quiet"]
    args = parse(argv)
    assert args.quiet is True and args.verbose is False and args.debug is False


def test_help_shows_no_internal_names(capsys):
    text = build_parser().format_help()
    assert "MAIN_" not in text and "main_" not in text
    for command in ("run", "resume", "play", "compare", "report", "noise", "export", "families"):
        assert command in text


def test_no_command_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: tune" in capsys.readouterr().out


def test_every_error_class_carries_its_exit_code():
    assert issubclass(BadInput, Tune2048Error) and issubclass(BadInput, ValueError)
    assert (BadInput.exit_code, Failure.exit_code) == (2, 1)
    from engine.board import BoardError
    from engine.export import ExportError
    from engine.families import FamilyNotFound, HeuristicError
    from engine.family_check import FamilyCheckError
    from engine.weights_file import WeightsFileError
    from tuner.cluster.ray_session import ClusterConnectionError
    from tuner.errors import CheckpointError, ConfigError, EvaluationError
    from tuner.strategies import StrategyStateError

    for error in (BoardError, ExportError, FamilyNotFound, HeuristicError, FamilyCheckError,
                  WeightsFileError, CheckpointError, ConfigError, StrategyStateError, UsageError):
        assert issubclass(error, BadInput), error
    for error in (EvaluationError, ClusterConnectionError):
        assert issubclass(error, Failure), error


def test_a_failure_prints_one_line_and_exits_1(monkeypatch, capsys):
    def fail(args):
        raise Failure("the cluster went away")

    monkeypatch.setattr(run, "handle", fail)
    assert main(["--config", "c.yaml"]) == 1
    assert capsys.readouterr().err == "tune: error: the cluster went away\n"


def test_bad_input_with_debug_keeps_its_traceback(monkeypatch):
    def bad(args):
        raise BadInput("c.yaml: family: nope")

    monkeypatch.setattr(run, "handle", bad)
    assert main(["run", "c.yaml"]) == 2
    with pytest.raises(BadInput):
        main(["run", "c.yaml", "--debug"])


# ---- start-up: the command line and a config's check load no heavy library ---------------------
HEAVY = ("numpy", "cma", "numba", "ray")
SUBCOMMAND_MODULES = ("tuner.cli.compare", "tuner.cli.export", "tuner.cli.families",
                      "tuner.cli.job", "tuner.cli.noise", "tuner.cli.options", "tuner.cli.play",
                      "tuner.cli.report", "tuner.cli.resume", "tuner.cli.run", "tuner.cli.status",
                      "tuner.cli.stop")


def loaded_after(code: str) -> dict[str, bool]:
    """Which of ``HEAVY`` and ``SUBCOMMAND_MODULES`` a fresh Python has loaded after ``code``."""
    names = [*HEAVY, *SUBCOMMAND_MODULES]
    report = f"import json, sys; print(json.dumps({{m: m in sys.modules for m in {names!r}}}))"
    done = subprocess.run([sys.executable, "-c", f"{code}\n{report}"], capture_output=True,
                          text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout)


@pytest.mark.subprocess
def test_the_command_line_loads_neither_numpy_nor_pycma_nor_numba_to_refuse_an_argument():
    loaded = loaded_after("import tuner.cli.main")
    assert all(loaded[module] for module in SUBCOMMAND_MODULES)  # tuner.cli.main imports them all
    assert not any(loaded[name] for name in HEAVY), loaded
    # reading the arguments builds every subcommand's parser: a refusal loads none of them
    loaded = loaded_after("from tuner.cli.main import main\nassert main(['play', '--games', '0']) == 2")
    assert not any(loaded[name] for name in HEAVY), loaded


@pytest.mark.subprocess
def test_checking_a_config_loads_neither_pycma_nor_numba():
    configs = sorted(str(path) for path in (ROOT / "configs").glob("*.yaml"))
    assert len(configs) >= 10
    loaded = loaded_after(f"from tuner.config import load_config\nfor path in {configs!r}:\n"
                          "    load_config(path)")
    # numpy it does load: the check computes each family's heuristic, numpy code, at the corners
    # of the box (tuner.config.params._check_heuristic)
    assert {name for name in HEAVY if loaded[name]} == {"numpy"}


# a signal to itself once main() has returned, as a second Ctrl-C that comes while tune exits
SIGNAL_AFTER_MAIN = ("import os, signal, sys\nfrom tuner.cli.main import main\n"
                     "code = {call}\nos.kill(os.getpid(), signal.{name})\nsys.exit(code)")


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM"])
@pytest.mark.subprocess
def test_the_tune_process_ignores_signals_once_its_outcome_is_known(name):
    program = SIGNAL_AFTER_MAIN.format(call="main()", name=name)
    done = subprocess.run([sys.executable, "-c", program, "play", "--games", "0"],
                          capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
    assert done.returncode == 2, done.stderr  # the refusal's own status, not the signal's
    assert done.stderr.count("\n") == 1 and "--games" in done.stderr
    # main(argv) is the command run inside a program, which keeps its own handling of signals
    in_process = SIGNAL_AFTER_MAIN.format(call="main(['play', '--games', '0'])", name=name)
    done = subprocess.run([sys.executable, "-c", in_process], capture_output=True, text=True,
                          timeout=60, check=False, cwd=ROOT)
    assert done.returncode != 2
