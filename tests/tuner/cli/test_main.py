"""tuner.cli.main: the short forms, options before or after a subcommand, help, and exit codes."""

from __future__ import annotations

import pytest

from engine.errors import BadInput, Failure, Tune2048Error
from tuner.cli import resume, run
from tuner.cli.main import build_parser, main, parse
from tuner.cli.options import UsageError


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
