"""No command changes a file git tracks: every command that writes, aimed at the committed files
of a real checkout (the shipped ``runs/``, a campaign committed between sessions, a committed
tables export), is refused in one line with exit status 2, and the checkout is as it was; the
command the refusal suggests works when pasted, and changes no committed file either.

The checkout is a git repository made in a temporary folder from the repository's configs,
examples and runs. ``tune`` runs with the stand-in Ray (``conftest.no_ray``): a command that got
past every check exits with ``EXIT_RAY_GUARD`` instead of starting Ray.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EXIT_RAY_GUARD, REPO_ROOT, run_tune

from tuner.cli.main import build_parser, parse
from tuner.cli.options import command_with

# A fixed author and date: the commit is the same on every machine.
GIT_ENV = {"GIT_AUTHOR_NAME": "tune2048 tests", "GIT_AUTHOR_EMAIL": "tests@example.org",
           "GIT_COMMITTER_NAME": "tune2048 tests", "GIT_COMMITTER_EMAIL": "tests@example.org",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
CAMPAIGN = "run-0.1.0"  # tests/data's run with a checkpoint; its config names ./run-0.1.0
TABLES = "runs/classic-d1-tables"  # a tables export, committed
REFUSAL = "git tracks this file, and tune never changes a committed file"
# What a refusal suggests running, after one of these and up to the next "; ".
ADVICE = re.compile(r"(?:elsewhere|a copy of it): (.+?)(?:; |$)")

# (command, what the one line says); each aims at committed files.
CASES = {
    "export-c-onto-a-shipped-best": (
        ["export", "runs/classic-d2/best.yaml", "--format", "c",
         "--output", "runs/classic-d1/best.yaml"], f"runs/classic-d1/best.yaml: {REFUSAL}"),
    "export-json-onto-results": (
        ["export", "runs/classic-d2/best.yaml", "--format", "json", "--output", "runs/RESULTS.md"],
        f"runs/RESULTS.md: {REFUSAL}"),
    "export-json-onto-a-history": (
        ["export", "runs/classic-d2/best.yaml", "--format", "json",
         "--output=runs/classic-d1/history.csv"], f"runs/classic-d1/history.csv: {REFUSAL}"),
    "export-onto-its-own-source": (
        ["export", "runs/classic-d1/best.yaml", "--format", "c",
         "--output", "runs/classic-d1/best.yaml"], f"runs/classic-d1/best.yaml: {REFUSAL}"),
    "export-tables-onto-a-committed-export": (
        ["export", "runs/classic-d2/best.yaml", "--format", "tables", "--output", TABLES],
        f"{TABLES}/"),
    "report-plot-into-a-shipped-run": (
        ["report", "runs/classic-d1", "--plot"], f"runs/classic-d1/convergence.png: {REFUSAL}"),
    "report-plot-onto-another-runs-plot": (
        ["report", "runs/classic-d1", "--plot", "runs/classic-d2/convergence.png"],
        f"runs/classic-d2/convergence.png: {REFUSAL}"),
    "compare-save-adding-games-to-a-committed-file": (
        ["compare", "runs/classic-d1/best.yaml", "classic-reference", "--games", "30",
         "--save", "runs/compare/auto5-100.games.json"],
        f"runs/compare/auto5-100.games.json: {REFUSAL}"),
    "resume-a-committed-campaign": (["resume", CAMPAIGN], f"{CAMPAIGN}/"),
    "resume-short-form": (["--resume", CAMPAIGN, "--workers", "1"], f"{CAMPAIGN}/"),
    "run-a-committed-campaigns-config": (["run", f"{CAMPAIGN}/config.yaml"], f"{CAMPAIGN}/"),
    "run-overwrite-a-committed-campaign": (
        ["run", f"{CAMPAIGN}/config.yaml", "--overwrite"], f"{CAMPAIGN}/"),
    "run-overwrite-a-shipped-result": (
        ["run", "runs/classic-d1/config.yaml", "--overwrite"],
        "runs/classic-d1: holds results without a checkpoint, which tune never replaces"),
    "stop-a-committed-campaign": (
        ["stop", CAMPAIGN], f"{CAMPAIGN}: no tune process is running this run: nothing to stop"),
}
# Refusals that suggest no command: every other one does.
SUGGESTS_NOTHING = {"run-overwrite-a-shipped-result", "stop-a-committed-campaign"}
# Commands with no option that writes a file: each is run below on committed files all the same.
WRITE_NOTHING = {"play", "noise", "families", "family", "status", "engine"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                           *args], cwd=root, env={**os.environ, **GIT_ENV}, check=True,
                          capture_output=True, text=True).stdout


def state(root: Path) -> tuple[str, dict[str, str]]:
    """What git says of the work tree (ignored files included), and every file's SHA-256 but
    git's own."""
    files = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
             for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.parts}
    return git(root, "status", "--porcelain", "--ignored"), files


@pytest.fixture(scope="module")
def checkout(tmp_path_factory, no_ray) -> Path:
    """A git checkout of the shipped configs, examples and runs, with a campaign committed
    between sessions and a committed tables export; every file committed."""
    root = tmp_path_factory.mktemp("checkout")
    for folder in ("configs", "examples", "runs"):
        shutil.copytree(REPO_ROOT / folder, root / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO_ROOT / ".gitignore", root)
    shutil.copytree(REPO_ROOT / "tests" / "data" / CAMPAIGN, root / CAMPAIGN)
    made = run_tune(["export", "runs/classic-d1/best.yaml", "--format", "tables",
                     "--output", TABLES], root, no_ray)
    assert made.returncode == 0, made.stderr
    git(root, "init", "-q")
    git(root, "add", "-f", ".")
    git(root, "commit", "-q", "-m", "shipped")
    return root


@pytest.fixture
def clean(checkout) -> Path:
    """The checkout, as committed again after the test (what a followed advice wrote is
    removed)."""
    yield checkout
    git(checkout, "clean", "-fdxq")
    assert git(checkout, "status", "--porcelain", "--ignored") == ""


def test_every_subcommand_is_tried_or_writes_nothing():
    [subcommands] = [action.choices for action in build_parser()._actions
                     if isinstance(action, argparse._SubParsersAction)]
    tried = {argv[0] for argv, _said in CASES.values() if not argv[0].startswith("-")}
    assert set(subcommands) == tried | WRITE_NOTHING


@pytest.mark.parametrize("case", CASES)
def test_a_command_aimed_at_committed_files_is_refused_and_changes_nothing(clean, no_ray, case):
    argv, said = CASES[case]
    before = state(clean)

    result = run_tune(argv, clean, no_ray)

    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith(f"tune: error: {said}"), line
    assert len(ADVICE.findall(line)) == (case not in SUGGESTS_NOTHING), line
    assert state(clean) == before


@pytest.mark.slow
@pytest.mark.parametrize("case", [case for case in CASES if case not in SUGGESTS_NOTHING])
def test_the_command_a_refusal_suggests_works_and_changes_no_committed_file(clean, no_ray, case):
    argv, _said = CASES[case]
    line = run_tune(argv, clean, no_ray).stderr
    [advice] = ADVICE.findall(line)
    assert follow(advice, clean, no_ray) in (0, EXIT_RAY_GUARD), advice
    assert git(clean, "status", "--porcelain", "--untracked-files=no") == ""


@pytest.mark.parametrize(("argv", "status"), [
    (["families"], 0),
    (["noise", "--config", "runs/classic-d1/config.yaml", "--games", "2"], EXIT_RAY_GUARD),
    (["status", "runs/classic-d1"], 2),  # a finished run that kept no status file
    (["engine", "check", "--games", "4", "--", sys.executable,
      "examples/engines/python_engine.py"], 0),
])
def test_a_command_that_writes_nothing_leaves_the_checkout_as_it_was(clean, no_ray, argv,
                                                                       status):
    before = state(clean)
    result = run_tune(argv, clean, no_ray)
    assert result.returncode == status, result.stderr
    assert state(clean) == before


def test_comparing_on_a_committed_file_that_holds_every_game_reads_it_only(clean, no_ray):
    # RESULTS.md's command: every game is in the committed file, so nothing is played or written
    before = state(clean)
    result = run_tune(["compare", "runs/classic-nodes/best.yaml", "runs/classic-d3/best.yaml",
                       "classic-reference", "--depth", "4", "--games", "350", "--save",
                       "runs/compare/depth4-350.games.json"], clean, no_ray)
    assert result.returncode == 0, result.stderr
    assert "classic-nodes/best - classic-d3/best" in result.stdout
    assert state(clean) == before


@pytest.mark.parametrize(("argv", "suggested"), [
    (["export", "a.yaml", "--format", "c", "--output", "runs/a.c"],
     "tune export a.yaml --format c --output a.c"),
    (["export", "runs/a.c", "--out=runs/a.c", "--format", "c"],  # a prefix, and the source kept
     "tune export runs/a.c --out=a.c --format c"),
    (["--quiet", "export", "my file.yaml", "--output", "x", "--format", "json", "--output", "runs/a.c"],
     "tune --quiet export 'my file.yaml' --output a.c --format json --output a.c"),
])
def test_a_suggested_command_changes_only_the_refused_value(argv, suggested):
    assert command_with(parse(argv), "--output", "a.c") == suggested


def follow(advice: str, cwd: Path, guard: Path) -> int:
    """Run a suggested shell command line in ``cwd``, ``tune`` being this checkout's, with the
    stand-in Ray; its exit status."""
    shim = cwd.parent / f"{cwd.name}-bin"
    shim.mkdir(exist_ok=True)
    (shim / "tune").write_text(f'#!/bin/sh\nexec {sys.executable} -m tuner "$@"\n')
    (shim / "tune").chmod(0o755)
    env = dict(os.environ, PATH=f"{shim}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join([str(guard), str(REPO_ROOT)]))
    return subprocess.run(["bash", "-c", advice], cwd=cwd, env=env, capture_output=True,
                          timeout=300, check=False).returncode
