"""Bad input of every kind: ``tune`` exits with status 2 and one line per problem, before it
computes or writes anything.

The corpus and its manifest live in tests/data/bad/ (see cases.yaml there). Every case runs the
real command line in a process of its own (a fork of a warm one: conftest's ``run_tune``), in an
empty working directory, so a config's ``output_dir: runs`` would show up there if the run got as
far as creating its directory.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import EXIT_RAY_GUARD, run_tune

from engine.weights_file import WeightsFileError, parse_weights
from tuner.cli.main import main
from tuner.config import load_config
from tuner.errors import ConfigError
from tuner.loop.run import TuningRun
from tuner.store.checkpoint import save_state

REPO_ROOT = Path(__file__).resolve().parents[1]
CORPUS = REPO_ROOT / "tests" / "data" / "bad"
QUICK = REPO_ROOT / "configs" / "quick.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(
    (CORPUS / "cases.yaml").read_text(encoding="utf-8")
)["cases"]
KINDS = ("config", "weights", "checkpoint", "board", "report", "args")
DIRECTORY_KINDS = ("checkpoint", "report")
NOT_CASES = {"cases.yaml", "make_checkpoints.py", "__pycache__"}
# What {weights} and {config} stand for in an args case: good files, copied into the work folder.
GOOD_FILES = {
    "{weights}": REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml",
    "{config}": QUICK,
}
EXIT_BAD_INPUT = 2
MAX_LINE = 400  # characters of a message line: a bad value is echoed cut short
PREFIX = "tune: error: "

def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root``: file bytes, or None for a directory."""
    return {
        str(path.relative_to(root)): None if path.is_dir() else path.read_bytes()
        for path in sorted(root.rglob("*"))
    }


def assert_refused(result: subprocess.CompletedProcess, lines: int = 1) -> list[str]:
    """Exit status 2, no traceback, nothing on stdout, ``lines`` lines on stderr."""
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output
    assert result.returncode == EXIT_BAD_INPUT, output
    assert result.stdout == ""
    stderr_lines = result.stderr.splitlines()
    assert len(stderr_lines) == lines, result.stderr
    assert stderr_lines[0].startswith(PREFIX), result.stderr
    return stderr_lines


def case_args(case: dict[str, Any], work: Path) -> list[str]:
    """Copy the case's input into ``work`` and return the command line that reads it."""
    kind = case["kind"]
    if kind == "board":
        return ["play", "--board", case["board"]]
    if "file" in case:
        source = CORPUS / case["file"]
        if kind in DIRECTORY_KINDS:
            shutil.copytree(source, work / case["file"])
        else:
            shutil.copyfile(source, work / case["file"])
    if kind == "checkpoint":
        return ["--resume", case["file"]]
    if kind == "report":
        return ["report", case["file"]]
    if kind == "config":
        return ["--config", case["file"]]
    if kind == "weights":
        return ["play", "--weights", case["file"], "--games", "1", "--depth", "0"]
    args = []
    for arg in case["args"]:
        if arg in GOOD_FILES:
            shutil.copyfile(GOOD_FILES[arg], work / GOOD_FILES[arg].name)
            arg = GOOD_FILES[arg].name
        args.append(case["file"] if arg == "{file}" else arg)
    return args


def case_param(case: dict[str, Any]):
    marks = [pytest.mark.xfail(strict=True, reason=case["bug"])] if "bug" in case else []
    return pytest.param(case, id=case["id"], marks=marks)


@pytest.mark.parametrize("case", [case_param(c) for c in CASES])
def test_bad_input_exits_2_with_one_line_per_problem(case, tmp_path, no_ray):
    work = tmp_path / "work"
    work.mkdir()
    args = case_args(case, work)
    before = snapshot(work)

    result = run_tune(args, work, no_ray)

    lines = assert_refused(result, case.get("lines", 1))
    for expected in case["expect"]:
        assert expected in result.stderr, result.stderr
    if "file" in case:
        name = Path(case["file"]).name
        assert all(name in line for line in lines), result.stderr
    assert all(len(line) <= MAX_LINE for line in lines), result.stderr
    assert snapshot(work) == before
    assert not (work / "runs").exists() and not (work / "outputs").exists()


def test_manifest_covers_the_corpus():
    ids = [c["id"] for c in CASES]
    assert len(ids) >= 100
    assert len(ids) == len(set(ids))
    assert all(c["kind"] in KINDS for c in CASES)
    files = [c["file"] for c in CASES if c["kind"] not in ("board", "args")]
    assert len(files) == len(set(files))  # one case per file; args cases may reuse a file
    on_disk = {p.name for p in CORPUS.iterdir()} - NOT_CASES
    assert sorted(files) == sorted(on_disk)
    for case in CASES:
        if case["kind"] == "board":
            assert "file" not in case and case["board"], case["id"]
            continue
        if case["kind"] == "args":
            assert case["args"] and all(isinstance(a, str) for a in case["args"]), case["id"]
            assert ("{file}" in case["args"]) == ("file" in case), case["id"]
            assert "file" not in case or case["file"] in on_disk, case["id"]
            continue
        assert any(Path(case["file"]).name in s for s in case["expect"]), case["id"]
        is_directory = (CORPUS / case["file"]).is_dir()
        assert is_directory == (case["kind"] in DIRECTORY_KINDS), case["id"]


# ---- run directories ---------------------------------------------------------------------------

def write_config(path: Path, output_dir: Path, changes: dict[str, Any] | None = None) -> Path:
    """configs/quick.yaml with ``run.output_dir`` set and dotted keys (``search.depth``) changed."""
    document = yaml.safe_load(QUICK.read_text(encoding="utf-8"))
    document["run"]["output_dir"] = str(output_dir)
    for dotted, value in (changes or {}).items():
        section, key = dotted.split(".")
        document[section][key] = value
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def start_run(config_path: Path, checkpoint: bool = False) -> Path:
    """A run directory made without Ray: config.yaml, and a generation-0 checkpoint if asked."""
    config = load_config(config_path)
    config.run_dir.mkdir(parents=True)
    run = TuningRun.start(config, config.run_dir, progress=False)
    if checkpoint:
        save_state(config.run_dir, run.state)
    return config.run_dir


def test_unwritable_output_dir_is_refused_before_compute(tmp_path, no_ray):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            # Running as root: permissions stop nothing, but no one can create a directory
            # under a plain file.
            blocker = tmp_path / "a-file"
            blocker.write_text("not a directory\n", encoding="utf-8")
            output_dir = blocker / "runs"
        else:
            output_dir = locked / "runs"
        write_config(tmp_path / "unwritable.yaml", output_dir)
        before = snapshot(tmp_path)

        result = run_tune(["--config", "unwritable.yaml"], tmp_path, no_ray)

        [line] = assert_refused(result)
        assert str(output_dir / "quick") in line
        assert "cannot create run directory" in line
        assert snapshot(tmp_path) == before
    finally:
        locked.chmod(0o700)


def test_new_run_into_a_directory_holding_another_run_is_refused(tmp_path, no_ray):
    run_dir = start_run(write_config(tmp_path / "first.yaml", tmp_path / "runs"))
    write_config(tmp_path / "other.yaml", tmp_path / "runs", {"search.depth": 2})
    before = snapshot(tmp_path)

    result = run_tune(["--config", "other.yaml"], tmp_path, no_ray)

    [line] = assert_refused(result)
    assert f"{run_dir}: holds another run" in line
    assert "--overwrite" in line
    assert snapshot(tmp_path) == before


def test_a_family_file_edited_since_the_run_started_is_refused_on_resume(tmp_path, no_ray):
    """The run records its family file's hash; an edited file would mix two heuristics in one
    run, so resuming is refused, and ``--family-changed``, which the message names, resumes."""
    shutil.copy(REPO_ROOT / "examples" / "families" / "seed001.py", tmp_path / "seed001.py")
    config = tmp_path / "fam.yaml"
    shutil.copy(REPO_ROOT / "examples" / "families" / "seed001.yaml", config)
    document = yaml.safe_load(config.read_text(encoding="utf-8"))
    document["run"]["output_dir"] = str(tmp_path / "runs")
    config.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    run_dir = start_run(config, checkpoint=True)
    unchanged = run_tune(["resume", str(run_dir)], tmp_path, no_ray)
    assert unchanged.returncode == EXIT_RAY_GUARD, unchanged.stderr
    with (tmp_path / "seed001.py").open("a", encoding="utf-8") as family:
        family.write("# edited\n")
    before = snapshot(tmp_path)

    result = run_tune(["resume", str(run_dir)], tmp_path, no_ray)

    [line] = assert_refused(result)
    assert "code of family" in line and "changed since the run started" in line
    assert f"tune resume {run_dir} --family-changed" in line
    assert snapshot(tmp_path) == before
    for args in (["resume", str(run_dir), "--family-changed"],
                 ["--resume", str(run_dir), "--family-changed"]):
        anyway = run_tune(args, tmp_path, no_ray)  # the advice works
        assert anyway.returncode == EXIT_RAY_GUARD, anyway.stderr
        assert "resuming with the new code" in anyway.stderr


# A run as small as configs/quick.yaml plays in the command's own process, where no stand-in
# for Ray stops it: the runs below that must reach the tuning loop ask for Ray's workers.
ON_RAY = {"ray.workers": 2}


def test_starting_the_same_run_again_suggests_resuming_it(tmp_path, no_ray):
    run_dir = start_run(write_config(tmp_path / "first.yaml", tmp_path / "runs", ON_RAY),
                        checkpoint=True)
    before = snapshot(tmp_path)

    result = run_tune(["--config", "first.yaml"], tmp_path, no_ray)

    [line] = assert_refused(result)
    assert f"{run_dir}: already holds a run" in line
    assert f"tune resume {run_dir}" in line
    assert snapshot(tmp_path) == before
    resumed = run_tune(["--resume", str(run_dir)], tmp_path, no_ray)  # the advice works
    assert resumed.returncode == EXIT_RAY_GUARD, resumed.stderr


def test_the_same_run_without_a_checkpoint_starts_again(tmp_path, no_ray):
    # stopped before its first generation (Ray did not start, Ctrl-C): nothing to resume, and
    # nothing to lose, so the same command starts it again
    run_dir = start_run(write_config(tmp_path / "first.yaml", tmp_path / "runs", ON_RAY))

    result = run_tune(["--config", "first.yaml"], tmp_path, no_ray)

    assert result.returncode == EXIT_RAY_GUARD, result.stderr
    assert (run_dir / "config.yaml").is_file()


def test_resume_with_a_changed_evaluation_key_is_refused(tmp_path, no_ray):
    run_dir = start_run(write_config(tmp_path / "run.yaml", tmp_path / "runs"), checkpoint=True)
    # A stop condition may change on resume, the games per candidate may not: only the latter
    # is named as the refused change.
    write_config(tmp_path / "edited.yaml", tmp_path / "runs",
                 {"evaluation.games": 48, "cmaes.max_generations": 9})
    before = snapshot(tmp_path)

    result = run_tune(["--resume", str(run_dir), "--config", "edited.yaml"], tmp_path, no_ray)

    [line] = assert_refused(result)
    assert line.startswith(f"{PREFIX}edited.yaml: cannot resume {run_dir}")
    assert "with a changed evaluation.games (the run's 24, here 48):" in line
    assert line.endswith(f"resume it with its own settings: tune resume {run_dir}")
    assert snapshot(tmp_path) == before


def test_a_weights_file_naming_a_family_file_runs_nothing_unless_the_file_is_named(tmp_path,
                                                                                   no_ray):
    families = tmp_path / "families"
    families.mkdir()
    (families / "marker_family.py").write_text(
        "from pathlib import Path\nPath(__file__).with_suffix('.ran').write_text('ran')\n",
        encoding="utf-8")
    weights = (CORPUS / "weights-unknown-family.yaml").read_text(encoding="utf-8")
    (tmp_path / "w.yaml").write_text(
        weights.replace("family: classik", 'family: "families/marker_family.py:Fam"'),
        encoding="utf-8")
    before = snapshot(tmp_path)

    result = run_tune(["play", "--weights", "w.yaml", "--games", "1"], tmp_path, no_ray)

    [line] = assert_refused(result)
    assert line.startswith(f"{PREFIX}w.yaml: family: ")
    assert line.endswith("add --family-file families/marker_family.py")
    assert snapshot(tmp_path) == before  # the family file's code did not run


# ---- a depth: one grammar wherever one is written ----------------------------------------------
# Hostile depths, each refused in one line wherever a depth is read: a config's search.depth, a
# weights file's depth (version 2, which takes policies), tune play's --depth (the grammar alone)
# and tune noise's (through the config's checks). DEPTH_TEXT: what a command line can give, and a
# file as a string; DEPTH_YAML: a file's YAML as written (a key twice only a file can hold).
DEPTH_TEXT = {
    "empty": "", "spaces": "   ", "tab and newline": "\t\n", "plus": "+", "minus": "-",
    "negative": "-1", "two signs": "+-3", "space inside": "3 3", "exponent": "1e3",
    "decimal": "3.0", "hex": "0x3", "arabic-indic digit": "٣", "fullwidth digit": "３",
    "superscript": "³", "5000 digits": "9" * 5000, "zeros then 9": "0" * 5000 + "9",
    "nul": "3\x00", "word": "deep", "long word": "deep" * 1000, "AUTO": "AUTO",
    "auto space": "auto cap=4", "auto colon alone": "auto:", "auto comma": "auto:,",
    "auto no value": "auto:cap", "auto empty value": "auto:cap=", "auto no key": "auto:=4",
    "auto key twice": "auto:cap=4,cap=4", "auto key twice differing": "auto:cap=4,cap=5",
    "auto floor twice": "auto:floor=2,offset=2,floor=3", "auto unknown key": "auto:depth=4",
    "auto semicolon": "auto:cap=4;floor=2", "auto colon": "auto:cap:4",
    "auto double equals": "auto:cap==4", "auto trailing comma": "auto:cap=4,",
    "auto 5000 digits": "auto:cap=" + "9" * 5000, "auto float": "auto:cap=4.0",
    "auto negative": "auto:cap=-4", "auto unicode digit": "auto:cap=٤",
    "auto below floor": "auto:cap=2", "nodes bare": "nodes", "nodes colon": "nodes:",
    "nodes underscore": "nodes:_", "nodes double underscore": "nodes:1__0",
    "nodes leading underscore": "nodes:_1", "nodes zero": "nodes:0", "nodes negative": "nodes:-5",
    "nodes exponent": "nodes:1e6", "nodes two": "nodes:5,6", "nodes 5000 digits":
    "nodes:" + "9" * 5000, "nodes unicode digits": "nodes:١٠٠", "nodes equals": "nodes=5",
    "yaml as text": "{nodes: 5}", "null word": "null", "None word": "None", "true word": "true",
    "colon": ":", "nine": "9",
}
DEPTH_YAML = {
    "null": "null", "true": "true", "false": "false", "float": "2.5", "integral float": "3.0",
    "nan": ".nan", "inf": ".inf", "negative": "-1", "nine": "9", "30 digits": "1" * 30,
    "5000 digits": "9" * 5000, "list": "[]", "list of an int": "[3]", "empty mapping": "{}",
    "auto int": "{auto: 3}", "auto text": "{auto: 'cap=4'}", "auto list": "{auto: []}",
    "auto float cap": "{auto: {cap: 4.0}}", "auto bool cap": "{auto: {cap: true}}",
    "auto text cap": "{auto: {cap: '4'}}", "auto unknown key": "{auto: {depth: 4}}",
    "auto null floor": "{auto: {floor: null}}", "auto key twice": "{auto: {cap: 4, cap: 5}}",
    "auto twice": "{auto: null, auto: null}", "nodes null": "{nodes: null}",
    "nodes text": "{nodes: '5'}", "nodes float": "{nodes: 5.0}", "nodes bool": "{nodes: true}",
    "nodes zero": "{nodes: 0}", "nodes 30 digits": "{nodes: " + "9" * 30 + "}",
    "nodes mapping": "{nodes: {n: 5}}", "nodes twice": "{nodes: 5, nodes: 6}",
    "two keys": "{auto: null, nodes: 5}", "AUTO key": "{AUTO: null}", "int key": "{3: 4}",
    "null key": "{null: null}",
}
# every hostile depth as a file writes it: a text as a double-quoted YAML string
DEPTH_IN_FILES = {**{f"text {k}": json.dumps(v) for k, v in DEPTH_TEXT.items()},
                  **{f"yaml {k}": v for k, v in DEPTH_YAML.items()}}


# how the depth grammar's refusals begin (Python's own words, "invalid literal for int()" or
# "Exceeds the limit (4300 digits)", are not ours)
DEPTH_WORDS = re.compile(r"(auto: (\w+: )?|nodes: )?(expected |missing |unknown setting |\w+ is "
                         r"given twice|cap \d+ is below the floor)")


def assert_depth_refused(message: str, start: str, place: str) -> None:
    """One line, beginning ``start``, that says at ``place`` what is wrong in our words (or the
    YAML reader's one line: a key twice, an integer of 5,000 digits)."""
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith(start) and len(message) <= MAX_LINE, message
    if "invalid YAML" not in message:
        assert DEPTH_WORDS.match(message.partition(place)[2]), message


@pytest.mark.parametrize("written", DEPTH_IN_FILES.values(), ids=DEPTH_IN_FILES.keys())
def test_a_hostile_depth_in_a_config_is_one_line(written, tmp_path):
    path = tmp_path / "config.yaml"
    text = QUICK.read_text(encoding="utf-8")
    path.write_text(text.replace("  depth: 1\n", f"  depth: {written}\n"), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    assert_depth_refused(str(caught.value), f"{path}: ", "search.depth: ")


@pytest.mark.parametrize("written", DEPTH_IN_FILES.values(), ids=DEPTH_IN_FILES.keys())
def test_a_hostile_depth_in_a_weights_file_is_one_line(written):
    text = GOOD_FILES["{weights}"].read_text(encoding="utf-8")
    assert "version: 1\n" in text and "depth: 2\n" in text
    text = text.replace("version: 1\n", "version: 2\n").replace("depth: 2\n", f"depth: {written}\n")
    with pytest.raises(WeightsFileError) as caught:
        parse_weights(text, "w.yaml")
    assert_depth_refused(str(caught.value), "w.yaml: ", "w.yaml: depth: ")


@pytest.mark.parametrize("command", [["play", "--games", "1"], ["noise", "--config", str(QUICK)]],
                         ids=["play", "noise"])
@pytest.mark.parametrize("written", DEPTH_TEXT.values(), ids=DEPTH_TEXT.keys())
def test_a_hostile_depth_on_the_command_line_is_one_line(written, command, capsys):
    assert main([*command, f"--depth={written}"]) == EXIT_BAD_INPUT
    captured = capsys.readouterr()
    assert captured.out == ""
    assert_depth_refused(captured.err.removesuffix("\n"), f"{PREFIX}--depth: ", "--depth: ")
