"""Files that lie: every file tune2048 reads back (status.json, the checkpoint, history.csv,
validation.csv, cluster.csv, best.yaml and a saved games file) is checked for type and range
before use, and a damaged one is one line naming the file and the key, exit status 2, nothing
written, from every command that reads it. And a run directory named longer than a file
system holds is one line, exit status 2.

Each family of cases takes a valid file, written by a real run (or comparison), and sets one
field to one hostile value: not a number, infinities, a number beyond a float (``1e400``) or a
machine integer (``2**70``), null, the wrong type (text for a number, a list, a mapping, a
boolean), a negative count. The commands run in this process (``tune``'s ``main``); a few of
them in a process of their own too.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import shutil
import signal
from pathlib import Path

import pytest
import yaml
from conftest import run_tune

from engine import yaml_text
from tuner.analysis import report
from tuner.api import open_run, resume
from tuner.cli.main import main
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt

# About 900 cases: the full suite runs them, the unit tier (a contributor's minute) does not.
pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def signal_handlers_restored():
    """``tune``'s main, run in this process, installs its Ctrl-C handling; other tests of the
    same test process expect Python's own."""
    yield
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

ROOT = Path(__file__).resolve().parents[1]
PREFIX = "tune: error: "
MAX_LINE = 500  # characters of the one line: a bad value is echoed cut short


# ---- a valid run and a valid games file, made once --------------------------------------------

@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A finished run of the classic family (``tiny/runs/tiny``, with every file a run writes)
    and a games file of a comparison of its best weights (``tiny/games.json``), both made by
    ``tune`` in this process."""
    work = tmp_path_factory.mktemp("tiny")
    document = yaml.safe_load((ROOT / "configs" / "quick.yaml").read_text(encoding="utf-8"))
    document["run"].update(name="tiny", output_dir=str(work / "runs"))
    document["search"]["depth"] = 0
    document["evaluation"]["games"] = 2
    document["cmaes"].update(popsize=4, max_generations=2)
    document["validation"] = {"games": 2, "top_k": 1}
    (work / "tiny.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    assert main(["run", str(work / "tiny.yaml"), "--quiet"]) == 0
    run_dir = work / "runs" / "tiny"
    for name in ("status.json", "checkpoint.pkl", "history.csv", "validation.csv",
                 "cluster.csv", "best.yaml"):
        assert (run_dir / name).is_file(), name
    assert main(["compare", str(run_dir / "best.yaml"), "classic-reference", "--games", "30",
                 "--depth", "0", "--save", str(work / "games.json")]) == 0
    return work


@pytest.fixture
def work(made, tmp_path) -> Path:
    """A copy of ``made``, for a test to damage."""
    shutil.copytree(made, tmp_path / "w")
    return tmp_path / "w"


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.name != "run.log"}


def refused(args: list[str], capsys, path: Path, key: str) -> None:
    """``tune ARGS`` exits with status 2 and one line naming ``path`` and ``key``."""
    code = main(args)
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    assert code == 2, (code, out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), err
    assert str(path) in lines[0] and key in lines[0], lines[0]
    assert len(lines[0]) <= MAX_LINE + len(str(path)), lines[0]
    assert out == ""


# ---- the hostile values, and which of them a field takes -------------------------------------

# What a number field holds: a count (a whole number from 0 to 2**63 - 1), a size (a number from
# 0), a spread (a standard error: from 0, inf where there is none, nan where it is not known), a
# value (any number); a value's, a size's and a spread's limit is 1e300. Text fields hold text.
COUNT, SIZE, SPREAD, VALUE, TEXT = "count", "size", "spread", "value", "text"
NAN, INF, NEG_INF, HUGE = float("nan"), float("inf"), float("-inf"), 2**70
E400 = float("inf")  # a file writes it 1e400 (json_text, yaml_with): told from INF by identity
# (id, the value, whether it is a number that fits each number kind)
HOSTILE = [
    ("nan", NAN, {SPREAD}),
    ("inf", INF, {SPREAD}),
    ("-inf", NEG_INF, set()),
    ("1e400", E400, {SPREAD}),
    ("2**70", HUGE, {SIZE, SPREAD, VALUE}),
    ("-1", -1, {VALUE}),
    ("1.5", 1.5, {SIZE, SPREAD, VALUE}),
    ("text", "12", set()),
    ("list", [12], set()),
    ("mapping", {"n": 12}, set()),
    ("true", True, set()),
    ("null", None, set()),
]


def hostile_for(kind: str, optional: bool = False) -> list[tuple[str, object]]:
    """The hostile values a field of ``kind`` must refuse (null fits an optional field)."""
    fits = []
    for name, value, kinds in HOSTILE:
        if kind in kinds or (value is None and optional) or (kind == TEXT and value == "12"):
            continue
        fits.append((name, value))
    return fits


def cases(fields: dict[str, tuple[str, bool]]) -> list:
    """A case for each field (``name: (kind, optional)``) and each hostile value it refuses."""
    return [pytest.param(field, value, id=f"{field}={name}")
            for field, (kind, optional) in fields.items()
            for name, value in hostile_for(kind, optional)]


E400_MARK = "__e400__"


def marked(value):
    """``value`` with E400 (anywhere in it) replaced by a text that marks where 1e400 goes."""
    if value is E400:
        return E400_MARK
    if isinstance(value, dict):
        return {k: marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [marked(v) for v in value]
    return value


def json_text(document) -> str:
    """JSON as Python writes it (NaN, Infinity), with ``1e400`` where E400 is."""
    return json.dumps(marked(document), indent=1).replace(f'"{E400_MARK}"', "1e400")


# ---- status.json: tune status, tune report ------------------------------------------------------

STATUS_FIELDS = {
    **dict.fromkeys(("run", "state", "host", "fitness", "event"), (TEXT, False)),
    **dict.fromkeys(("pid", "generation", "games"), (COUNT, False)),
    **dict.fromkeys(("process_start", "max_generations", "best_generation", "cpus"),
                    (COUNT, True)),
    "best_fitness": (VALUE, True), "best_stderr": (SPREAD, True),
    **dict.fromkeys(("share", "idle_cores", "idle_rate", "generation_seconds", "eta_seconds"),
                    (SIZE, True)),
    **dict.fromkeys(("started", "updated"), (SIZE, False)),
}


def test_the_status_family_covers_every_field_of_the_file(made):
    held = json.loads((made / "runs" / "tiny" / ckpt.STATUS_FILE).read_text())
    assert set(held) - {"format"} == {*STATUS_FIELDS, "resume"}
    assert set(held["resume"]) == set(RESUME_CASES)


# resume: the options the job was given that a resume takes, each refused as what it holds
RESUME_CASES = {"config": [12, ["a"]], "family_changed": [None, 1, "yes"],
                "workers": [-1, 1.5, HUGE, True, "2"], "address": [12, {"n": 1}]}


@pytest.mark.parametrize(("value", "expected"), [
    ([12], "resume: expected dict, got [12]"), ("12", "resume: expected dict, got '12'"),
    ({"nodes": 2}, "resume: unknown option 'nodes'"),
    *[({option: bad}, f"resume: {option}: expected ")
      for option, values in RESUME_CASES.items() for bad in values],
])
def test_a_damaged_resume_option_is_one_line_naming_it(work, capsys, value, expected):
    run_dir = work / "runs" / "tiny"
    path = run_dir / ckpt.STATUS_FILE
    held = json.loads(path.read_text())
    held["resume"] = value
    path.write_text(json_text(held))
    refused(["status", str(run_dir)], capsys, path, expected)


def status_cases() -> list:
    """Every case through ``tune status``; through ``tune report`` (slower: it reads the whole
    run), the first of each field's."""
    everything = cases(STATUS_FIELDS)
    first = {}
    for case in everything:
        first.setdefault(case.values[0], case)
    return ([pytest.param("status", *case.values, id=f"status:{case.id}") for case in everything]
            + [pytest.param("report", *case.values, id=f"report:{case.id}")
               for case in first.values()])


@pytest.mark.parametrize(("command", "field", "value"), status_cases())
def test_a_damaged_status_file_is_one_line_naming_it(work, capsys, command, field, value):
    run_dir = work / "runs" / "tiny"
    path = run_dir / ckpt.STATUS_FILE
    held = json.loads(path.read_text())
    held[field] = value
    path.write_text(json_text(held))
    before = snapshot(work)
    refused([command, str(run_dir)], capsys, path, f"{field}: expected")
    assert snapshot(work) == before


def test_a_process_id_beyond_a_pid_is_refused(work, capsys):
    run_dir = work / "runs" / "tiny"
    path = run_dir / ckpt.STATUS_FILE
    held = json.loads(path.read_text())
    held["pid"] = 2**31
    path.write_text(json_text(held))
    refused(["status", str(run_dir)], capsys, path, "pid: expected a process id")


# ---- checkpoint.pkl: tune resume -----------------------------------------------------------------

def damaged_state(run_dir: Path, change) -> Path:
    """The run's checkpoint with ``change(state)`` made, written whole (a valid checksum)."""
    path = run_dir / ckpt.CHECKPOINT_FILE
    state = ckpt.decode_state(path.read_bytes(), path)
    change(state)
    path.write_bytes(ckpt.encode_state(state))
    return path


def setting(name: str, value):
    return lambda state: setattr(state, name, value)


def elite(**changes):
    return lambda state: state.elites.__setitem__(0, dataclasses.replace(state.elites[0],
                                                                         **changes))


def row(name: str, column: str, value):
    return lambda state: getattr(state, name)[0].__setitem__(column, value)


CHECKPOINT_FIELDS = {
    **dict.fromkeys(("generation", "games", "evaluations"), (COUNT, False)),
    "seconds": (SIZE, False),
}
CHECKPOINT_CASES = [
    *[pytest.param(field, setting(field, value), id=f"{field}={name}")
      for field, (kind, _) in CHECKPOINT_FIELDS.items() for name, value in hostile_for(kind)],
    *[pytest.param(field, setting(field, value), id=f"{field}={name}")
      for field, values in {
          "config": [("list", []), ("text", "run"), ("null", None)],
          "strategy": [("text", "x"), ("null", None), ("number", 3)],
          "finished": [("text", "yes"), ("null", None), ("number", 1)],
          "stop_reason": [("null", None), ("number", 3), ("list", ["x"])],
          "cma_stop": [("null", None), ("number", 3)],
          "family_digest": [("number", 3), ("list", ["x"])],
          "history": [("null", None), ("mapping", {}), ("list-of-null", [None]),
                      ("list-of-list", [[1]]), ("number-key", [{1: 2.0}])],
          "cluster": [("null", None), ("number", 3), ("list-of-text", ["x"])],
          "elites": [("null", None), ("list-of-null", [None]), ("list-of-mapping", [{}])],
      }.items() for name, value in values],
    *[pytest.param(f"history[0].{column}", row("history", column, value),
                   id=f"history.{column}={name}")
      for column, kind in (("generation", COUNT), ("games", COUNT), ("best", VALUE),
                           ("best_stderr", SPREAD), ("sigma", SIZE))
      for name, value in hostile_for(kind)],
    *[pytest.param(f"cluster[0].{column}", row("cluster", column, value),
                   id=f"cluster.{column}={name}")
      for column, kind in (("cpus", COUNT), ("seconds", SIZE), ("game_seconds", SIZE))
      for name, value in hostile_for(kind)],
    *[pytest.param(f"elites[0].{field}", elite(**{field: value}), id=f"elites.{field}={name}")
      for field, kind in (("fitness", VALUE), ("stderr", SPREAD), ("games", COUNT),
                          ("generation", COUNT))
      for name, value in hostile_for(kind)],
    *[pytest.param(f"elites[0].{field}", elite(**{field: value}), id=f"elites.{field}={name}")
      for field, values in {"x": [("nan", [NAN]), ("text", ["1"]), ("null", None)],
                            "weights": [("inf", {"a": INF}), ("text", {"a": "1"}),
                                        ("list", [1.0])]}.items()
      for name, value in values],
    # a field added with a default reads as it (a checkpoint written before it); these have none
    pytest.param("history: missing", lambda state: delattr(state, "history"),
                 id="history-missing"),
    pytest.param("elites: missing", lambda state: delattr(state, "elites"), id="elites-missing"),
]


def test_the_checkpoint_family_covers_every_field_of_the_state():
    named = {case.values[0].partition("[")[0].partition(".")[0].partition(":")[0]
             for case in CHECKPOINT_CASES}
    assert named == {field.name for field in dataclasses.fields(ckpt.RunState)}


@pytest.mark.parametrize(("key", "change"), CHECKPOINT_CASES)
def test_a_checkpoint_holding_values_no_run_writes_is_one_line_naming_it(work, capsys, key,
                                                                        change):
    run_dir = work / "runs" / "tiny"
    path = damaged_state(run_dir, change)
    before = snapshot(work)
    if key == "config":
        key = "config: expected a mapping"
    refused(["resume", str(run_dir)], capsys, path, key)
    assert snapshot(work) == before
    with pytest.raises(CheckpointError, match=f"^{path}: damaged: "):
        resume(run_dir)


def test_the_valid_checkpoint_loads(made):
    run_dir = made / "runs" / "tiny"
    state = ckpt.load_state(run_dir)
    assert state.finished and state.generation == 2 and state.elites and state.cluster


# ---- history.csv, validation.csv, cluster.csv: tune report ---------------------------------------

# Each file's numbers by column; the report cannot do without those it reads (report.*_COLUMNS),
# an empty cell is the others' "not recorded"
CSV_COLUMNS = {
    ckpt.HISTORY_FILE: {**dict.fromkeys(("generation", "evaluations", "games", "popsize",
                                         "restart", "games_min", "games_max", "games_saved",
                                         "positions"), COUNT),
                        "best": VALUE, "median": VALUE, "worst": VALUE, "best_stderr": SPREAD,
                        "sigma": SIZE, "games_mean": SIZE, "validated": VALUE,
                        "validated_stderr": SPREAD},
    ckpt.VALIDATION_FILE: {"generation": COUNT, "fitness": VALUE, "mean_score": VALUE,
                           "fitness_stderr": SPREAD, "ci95": SPREAD, "vs_start": VALUE,
                           "vs_start_stderr": SPREAD},
    ckpt.CLUSTER_FILE: {"generation": COUNT, "cpus": COUNT, "seconds": SIZE,
                        "game_seconds": SIZE, "share": SIZE, "cpu_seconds": SIZE},
}
READ = {ckpt.HISTORY_FILE: report.HISTORY_COLUMNS, ckpt.VALIDATION_FILE: report.VALIDATION_COLUMNS,
        ckpt.CLUSTER_FILE: report.CLUSTER_COLUMNS}
CSV_HOSTILE = [("nan", "nan"), ("inf", "inf"), ("-inf", "-inf"), ("1e400", "1e400"),
               ("2**70", str(2**70)), ("-1", "-1"), ("1.5", "1.5"), ("empty", ""),
               ("text", "abc"), ("true", "True")]
CSV_FITS = {"nan": {SPREAD}, "inf": {SPREAD}, "1e400": {SPREAD}, "2**70": {SIZE, SPREAD, VALUE},
            "-1": {VALUE}, "1.5": {SIZE, SPREAD, VALUE}}


def csv_cases() -> list:
    found = []
    for name, columns in CSV_COLUMNS.items():
        for column, kind in columns.items():
            for label, text in CSV_HOSTILE:
                if kind in CSV_FITS.get(label, ()) or (text == "" and column not in READ[name]):
                    continue
                found.append(pytest.param(name, column, text, id=f"{name}:{column}={label}"))
    return found


def test_the_csv_family_covers_every_number_the_run_writes(made):
    run_dir = made / "runs" / "tiny"
    for name, columns in CSV_COLUMNS.items():
        header = next(csv.reader((run_dir / name).open()))
        # not read: the candidate's label, a flag, and per parameter or tile, weights and rates
        numbers = {c for c in header if c not in ("candidate", "within_noise")
                   and not c.startswith(("best_", "w_", "reach_")) or c == "best_stderr"}
        assert numbers <= set(columns), name  # validated: in the runs that validate as they go


def set_cell(path: Path, column: str, text: str) -> None:
    """The first row's ``column`` of the CSV file at ``path`` set to ``text``."""
    rows = list(csv.DictReader(io.StringIO(path.read_text())))
    rows[0][column] = text
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    path.write_text(out.getvalue())


@pytest.mark.parametrize(("name", "column", "text"), csv_cases())
def test_a_damaged_csv_is_one_line_naming_the_file_line_and_column(work, capsys, name, column,
                                                                   text):
    run_dir = work / "runs" / "tiny"
    path = run_dir / name
    set_cell(path, column, text)
    before = snapshot(work)
    refused(["report", str(run_dir)], capsys, path, f"line 2: {column}: expected")
    assert snapshot(work) == before


@pytest.mark.parametrize("name", [ckpt.HISTORY_FILE, ckpt.VALIDATION_FILE])
def test_open_run_reads_the_results_through_the_same_checks(work, name):
    path = work / "runs" / "tiny" / name
    set_cell(path, "generation", "nan")
    with pytest.raises(CheckpointError, match=f"^{path}: line 2: "):
        open_run(work / "runs" / "tiny")


# ---- best.yaml, a weights file: tune play --weights, tune report ---------------------------------

def weights_cases() -> list:
    values = {
        "format": [("number", 12), ("null", None), ("text", "x"), ("list", [1]), ("true", True)],
        "version": [("nan", NAN), ("1.5", 1.5), ("2**70", HUGE), ("-1", -1), ("text", "1"),
                    ("null", None), ("true", True), ("list", [1])],
        "family": [("number", 12), ("null", None), ("list", [1]), ("mapping", {"a": 1}),
                   ("true", True), ("empty", "")],
        "depth": [("nan", NAN), ("1.5", 1.5), ("2**70", HUGE), ("-1", -1), ("text", "x"),
                  ("null", None), ("true", True), ("list", [1])],
        "weights": [("number", 12), ("null", None), ("text", "x"), ("list", [1])],
        "weights.empty_weight": [(n, v) for n, v in hostile_for(VALUE) if v is not HUGE],
        "provenance": [("number", 12), ("text", "x"), ("list", [1]), ("true", True)],
    }
    return [pytest.param(field, value, id=f"{field}={name}")
            for field, pairs in values.items() for name, value in pairs]


def yaml_with(path: Path, field: str, value) -> None:
    document = yaml_text.load(path.read_text())
    where, _, key = field.rpartition(".")
    (document[where] if where else document)[key] = value
    path.write_text(yaml_text.dump(marked(document)).replace(E400_MARK, "1e400"))


@pytest.mark.parametrize("command", ["play", "report"])
@pytest.mark.parametrize(("field", "value"), weights_cases())
def test_a_damaged_weights_file_is_one_line_naming_it(work, capsys, command, field, value):
    run_dir = work / "runs" / "tiny"
    path = run_dir / ckpt.BEST_FILE
    yaml_with(path, field, value)
    before = snapshot(work)
    args = (["play", "--weights", str(path), "--games", "1", "--depth", "0"]
            if command == "play" else ["report", str(run_dir)])
    refused(args, capsys, path, field)
    assert snapshot(work) == before


# ---- a saved games file: tune compare --save ----------------------------------------------------

GAME_FIELDS = {"seed": COUNT, "score": COUNT, "max_tile": COUNT, "moves": COUNT,
               "moves_evaluated": COUNT, "final_board": COUNT, "seconds": SIZE}


def games_cases() -> list:
    found = [pytest.param(f"games[0][0].{key}", value, id=f"{key}={name}")
             for key, kind in GAME_FIELDS.items()
             for name, value in hostile_for(kind) + ([("3", 3), ("65536", 65536)]
                                                     if key == "max_tile" else [])]
    found += [pytest.param(f"games[0][0].{key}", 2**64, id=f"{key}=2**64")
              for key in ("seed", "final_board")]
    found += [pytest.param(f"players[0].{key}", value, id=f"player.{key}={name}")
              for key, pairs in {
                  "family": [("number", 12), ("null", None), ("list", [1])],
                  "weights": [("null", None), ("list", [1]), ("nan", {"w": NAN}),
                              ("text", {"w": "1"}), ("1e400", {"w": E400})],
                  "depth": [("nan", NAN), ("1.5", 1.5), ("null", None), ("true", True),
                            ("list", [1])],
                  "cutoff": [("nan", NAN), ("inf", INF), ("-1", -1), ("text", "1"),
                             ("null", None), ("true", True)],
              }.items() for name, value in pairs]
    return found


def test_the_games_family_covers_every_field_of_a_game(made):
    held = json.loads((made / "games.json").read_text())
    assert set(held["games"][0][0]) == set(GAME_FIELDS)
    assert set(held["players"][0]) == {"family", "weights", "depth", "cutoff"}


@pytest.mark.parametrize(("key", "value"), games_cases())
def test_a_damaged_games_file_is_one_line_naming_it(work, capsys, key, value):
    path = work / "games.json"
    held = json.loads(path.read_text())
    where, _, field = key.rpartition(".")
    target = held["players"][0] if where.startswith("players") else held["games"][0][0]
    target[field] = value
    path.write_text(json_text(held))
    before = snapshot(work)
    refused(["compare", str(work / "runs" / "tiny" / "best.yaml"), "classic-reference",
             "--games", "30", "--depth", "0", "--save", str(path)], capsys, path, key)
    assert snapshot(work) == before


# ---- names longer than a file system holds -------------------------------------------------------

LONG_NAMES = {
    "a name of 256 bytes": "n" * 256,
    "a name of 1,000 bytes": "n" * 1000,
    "a name of 300 bytes in UTF-8": "é" * 150,
    "a path of 5,000 bytes": "/".join(["p" * 200] * 25),
    "a folder name of 300 bytes": "f" * 300 + "/run",
}


@pytest.mark.parametrize("command", ["status", "resume", "report", "stop"])
@pytest.mark.parametrize("name", LONG_NAMES.values(), ids=LONG_NAMES.keys())
def test_a_run_directory_named_longer_than_a_file_system_holds_is_one_line(
        tmp_path, monkeypatch, capsys, command, name):
    monkeypatch.chdir(tmp_path)
    code = main([command, name])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err, err
    [line] = err.splitlines()
    assert line.startswith(PREFIX) and "no such run directory: a " in line, line
    assert "longer than a file system holds" in line and len(line) < 200, line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("args", [
    ["export", "{weights}", "--format", "tables", "--output", "{long}"],
    ["export", "{weights}", "--format", "json", "--output", "{long}.json"],
    ["play", "--weights", "{long}.yaml", "--games", "1"],
    ["run", "{long}.yaml"],
], ids=["export-tables", "export-json", "play", "run"])
def test_any_path_named_longer_than_a_file_system_holds_is_one_line(tmp_path, monkeypatch,
                                                                     capsys, args):
    monkeypatch.chdir(tmp_path)
    weights = ROOT / "engine" / "baselines" / "classic-reference.yaml"
    args = [arg.format(weights=weights, long="n" * 300) for arg in args]
    assert main(args) == 2
    out, err = capsys.readouterr()
    [line] = err.splitlines()
    assert line.startswith(PREFIX) and "Traceback" not in err and out == "", err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("call", [open_run, resume], ids=["open_run", "resume"])
def test_the_api_refuses_an_over_long_run_directory_as_bad_input(tmp_path, monkeypatch, call):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CheckpointError, match="longer than a file system holds"):
        call("n" * 256)


@pytest.mark.parametrize("command", ["status", "resume", "report", "stop"])
def test_a_run_directory_whose_staging_name_no_file_system_holds_is_read(
        made, tmp_path, capsys, command):
    """A run directory named 251 to 255 bytes is one a file system holds, but its staging
    directory (``.NAME.new``) is not: it is looked for and not found."""
    run_dir = tmp_path / ("r" * 252)
    shutil.copytree(made / "runs" / "tiny", run_dir)
    expected = {"status": 3, "resume": 0, "report": 0, "stop": 2}[command]
    assert main([command, str(run_dir)]) == expected
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if command == "stop":
        assert err.strip().endswith("no tune process is running this run: nothing to stop")
    shutil.rmtree(run_dir)
    assert main([command, str(run_dir)]) == 2
    assert capsys.readouterr().err.strip().endswith(": no such run directory")


# ---- the same, each command in a process of its own ----------------------------------------------

def test_damaged_files_and_long_names_are_one_line_in_a_process_of_their_own(work, no_ray):
    run_dir = work / "runs" / "tiny"
    status = json.loads((run_dir / ckpt.STATUS_FILE).read_text())
    status["pid"] = HUGE
    (run_dir / ckpt.STATUS_FILE).write_text(json_text(status))
    history = run_dir / ckpt.HISTORY_FILE
    set_cell(history, "generation", "nan")
    games = work / "games.json"
    held = json.loads(games.read_text())
    held["games"][0][0]["seed"] = -1
    games.write_text(json_text(held))
    copy = work / "best-copy.yaml"
    shutil.copyfile(run_dir / ckpt.BEST_FILE, copy)
    yaml_with(copy, "weights.empty_weight", NAN)
    checks = [
        (["status", str(run_dir)], f"{run_dir / ckpt.STATUS_FILE}: damaged: pid: expected"),
        (["report", str(run_dir)], f"{history}: line 2: generation: expected"),
        (["play", "--weights", str(copy), "--games", "1", "--depth", "0"],
         f"{copy}: weights.empty_weight: expected a finite number"),
        (["compare", str(run_dir / ckpt.BEST_FILE), "classic-reference", "--games", "30",
          "--depth", "0", "--save", str(games)],
         f"{games}: its games are not as tune compare writes them: games[0][0].seed: expected"),
        (["status", "n" * 300], "no such run directory: a name of 300 bytes"),
        (["resume", "n" * 300], "no such run directory: a name of 300 bytes"),
    ]
    path = damaged_state(run_dir, setting("generation", -1))
    checks.append((["resume", str(run_dir)], f"{path}: damaged: generation: expected"))
    for args, expected in checks:
        done = run_tune(args, work, no_ray)
        assert done.returncode == 2 and "Traceback" not in done.stderr, (args, done.stderr)
        [line] = done.stderr.splitlines()
        assert line.startswith(PREFIX) and expected in line, (args, line)
