"""``tune engine check``: a line per check, exit status 0 when all pass and 1 when one fails;
bad options are one line and exit status 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tuner.cli.main import main

pytestmark = pytest.mark.subprocess  # the checks start engines

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = str(ROOT / "examples" / "engines" / "python_engine.py")
BAD = str(ROOT / "tests" / "engine" / "external" / "bad_engine.py")


def test_a_good_engine_passes_every_check_after_its_price(capsys):
    assert main(["engine", "check", "--games", "4", "--", sys.executable, EXAMPLE]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("pass  handshake: python-example 1.0: protocol 1, 3 parameters")
    assert lines[1].startswith("price 41 games, about ")
    assert "24 for 3 parameters (8 each; --params NAME,... checks fewer)" in lines[1]
    assert len(lines) == 10 and all(line.startswith("pass  ") for line in lines[2:-1])
    assert lines[-1] == "all 8 checks passed"


def test_the_parameters_and_searches_checked_can_be_chosen(capsys):
    assert main(["engine", "check", "--games", "4", "--search", "depth:0", "--params",
                 "merges_weight,empty_weight", "--", sys.executable, EXAMPLE]) == 0
    out = capsys.readouterr().out
    assert "16 for 2 of the 3 parameters (8 each), 4 for per-game state at depth:0;" in out
    assert ("pass  parameters: each of the 2 checked (of 3) changes play (4 games at two values "
            "away from its default, at depth:0)") in out


def test_a_failed_check_exits_1_and_says_where(capsys):
    assert main(["engine", "check", "--games", "4", "--search", "depth:0", "--", sys.executable,
                 BAD, "chained-merges"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  rules: game with seed 1: move 9 (left) on 0000100022001121" in out
    assert out.splitlines()[-1] == "5 of 6 checks passed"


@pytest.mark.parametrize(("argv", "said"), [
    ([], ("no engine command: give it after --, e.g. tune engine check -- python "
         "examples/engines/python_engine.py")),
    (["--"], "no engine command"),
    (["--games", "0", "--", "x"], "--games must be from 1 to 10,000, got 0"),
    (["--timeout", "nan", "--", "x"], "--timeout must be a positive number of seconds"),
    (["--search", "ply:3", "--", "x"], "--search: a search is depth:N, auto or nodes:N"),
    (["--", "no-such-engine"], "engine 'no-such-engine': cannot start it"),
    (["--search", "depth:7", "--", sys.executable, EXAMPLE],
     "does not search at depth:7 (it declares depth:0 to depth:2)"),
    (["--search", "depth:0,,auto", "--", "x"],
     "--search: expected items separated by commas, got 'depth:0,,auto'"),
    (["--search", "depth:0,ply:2", "--", "x"],
     "--search: a search is depth:N, auto or nodes:N, got 'ply:2'"),
    (["--params", "", "--", "x"], "--params: expected items separated by commas, got ''"),
    (["--params", "merges_weight,lost", "--", sys.executable, EXAMPLE],
     ("declares no parameter named 'lost' (it declares empty_weight, merges_weight, "
      "monotonicity_weight)")),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, said):
    assert main(["engine", "check", *argv]) == 2
    captured = capsys.readouterr()
    assert said in captured.err and captured.err.count("\n") == 1, captured.err
