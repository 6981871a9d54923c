"""Engines a hostile user writes, through every command that starts one (docs/engine-protocol.md,
"Deadlines" and "Ending an engine"): engines whose lines come steadily but too slowly, engines
that stop reading their input, engines behind launchers (a shell script, ``env``, a wrapper that
forks, one that leaves a helper running, one that ignores SIGTERM), and an engine whose depths
go beyond our own search's. Each command ends within its documented bound plus 5 seconds (the
limit each is run under), prints no traceback, and leaves no process of the engine's running.

The engines are small scripts written into the test's folder; each writes its process id to
``pids`` there (a launcher its own too), which is how a process left behind is found."""

from __future__ import annotations

import gc
import os
import shlex
import signal
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import tune_forks
from tune_forks import RELEASE_SIGNALS, TUNE_MAIN

from engine.external import EngineFailure, EngineProcess, Search
from engine.weights_file import WeightsFile, read_weights, write_weights

pytestmark = pytest.mark.subprocess  # each test starts engines, most through `tune`

ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "engines" / "python_engine.py"
HANDSHAKE = 10.0  # seconds, the protocol's
BOUND_SLACK = 5.0  # what a command may take beyond its bound
GAME_TIMEOUT = 1.0  # what the tests give a game, where a command takes it
SHORT_HANDSHAKE = 1.0  # what tests of the handshake's deadline give it (a prelude sets it)
EVERY = 0.2  # seconds between a slow engine's lines, where it is not the issue's own example
DEAF_PARAMS = 3000  # 'set' requests of 74 bytes: 222,000 bytes, more than a pipe holds
RETRIES = 3  # of a unit of games whose engine failed, in `tune play` and `tune compare`
TRIES = 1 + RETRIES

ENGINE = '''\
"""A hostile engine, by its first argument; the second is a number it uses (seconds, a count)."""
import importlib.util, itertools, os, sys, time

PIDS = {pids!r}
with open(PIDS, "a") as pids:
    pids.write(f"{{os.getpid()}}\\n")
behaviour, number = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.0


def say(line):
    sys.stdout.write(line + "\\n")
    sys.stdout.flush()


if behaviour == "slow-moves":  # the example engine, each line of a transcript number s late
    spec = importlib.util.spec_from_file_location("example", {example!r})
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    play = example.play

    def slowly(seed, depth, weights, tell, trace):
        def late(line):
            if not line.startswith("game "):
                time.sleep(number)
            tell(line)
        play(seed, depth, weights, late, trace)

    example.play = slowly
    sys.exit(example.main())
sys.stdin.readline()  # the greeting
if behaviour == "blank-lines":  # a handshake that never ends: a blank line every number s
    say("name trickle 1.0")
    while True:
        time.sleep(number)
        say("")
if behaviour == "new-params":  # ... a new parameter every number s
    say("name trickle 1.0")
    for i in itertools.count():
        time.sleep(number)
        say(f"param p{{i}} float 1.0")
if behaviour == "one-slow-line":  # ... one line, a character every number s
    for char in itertools.cycle("name trickle "):
        time.sleep(number)
        sys.stdout.write(char)
        sys.stdout.flush()
say("name stub 1.0")
if behaviour == "deaf":  # number parameters, every 'set' answered before it is asked; no reading
    names = [f"{{'w' * 56}}_{{i:07d}}" for i in range(int(number))]
    for name in names:
        say(f"param {{name}} float 1.0 0.0 2.0")
else:
    say("param weight float 1.0 0.0 2.0")
    say("param bias float 0.0 -1.0 1.0")
say("search depth 0 12")
say("ready 1")
if behaviour == "deaf":
    for _ in names:
        say("ok")
    time.sleep(600)
weight = 1.0
for line in sys.stdin:  # the stub: games of one move, whose score follows the seed and weight
    words = line.split() or ["?"]
    if words[0] == "quit":
        break
    if len(line.rstrip("\\n")) > 4096:  # what a C engine's buffer holds (protocol.h)
        say("error a request longer than 4,096 characters")
        continue
    if behaviour == "asleep":  # the first request is never answered
        open(PIDS + ".asleep", "w").close()
        time.sleep(600)
    if words[0] == "set":
        weight = float(words[2]) if words[1] == "weight" else weight
        say("ok")
    elif behaviour == "garbage":
        say("GAME OVER!")
    else:
        for seed in words[2:]:
            say(f"game seed={{seed}} score={{round(4 * weight * (int(seed) % 5 + 1))}} tile=4 "
                "moves=1")
        say("done")
'''

LAUNCHERS = {
    # a shell that runs the engine as its child (not exec: a command follows)
    "sh": 'echo $$ >> "{pids}"\n"$@"\nexit $?\n',
    # ... and leaves a helper of its own running
    "sidecar": 'echo $$ >> "{pids}"\n"$1" "{folder}/helper.py" &\necho $! >> "{pids}"\n"$@"\n'
               'exit $?\n',
    # ... ignoring SIGTERM, as the engine it starts does
    "stubborn": "trap '' TERM\necho $$ >> \"{pids}\"\n\"$@\"\nexit $?\n",
}
FORKING = '''\
import os, sys
with open({pids!r}, "a") as pids:
    pids.write(f"{{os.getpid()}}\\n")
child = os.fork()
if child == 0:
    os.execv(sys.argv[1], sys.argv[1:])
os._exit(os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) & 0xFF)
'''


@pytest.fixture
def folder(tmp_path) -> Path:
    """The test's folder with the engine and its launchers; afterwards, what a failed test left
    running is killed (only processes whose command line names this folder)."""
    pids = tmp_path / "pids"
    pids.touch()
    (tmp_path / "engine.py").write_text(ENGINE.format(pids=str(pids), example=str(EXAMPLE)))
    (tmp_path / "helper.py").write_text("import time\ntime.sleep(600)\n")
    (tmp_path / "fork.py").write_text(FORKING.format(pids=str(pids)))
    for name, script in LAUNCHERS.items():
        (tmp_path / f"{name}.sh").write_text(script.format(pids=pids, folder=tmp_path))
    yield tmp_path
    for pid in recorded(tmp_path):
        try:
            if str(tmp_path) in Path(f"/proc/{pid}/cmdline").read_text() and running(pid):
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def engine(folder: Path, behaviour: str, number: float | None = None,
           launcher: str | None = None) -> list[str]:
    """The command line of the engine doing ``behaviour``, behind ``launcher`` if given."""
    command = [sys.executable, str(folder / "engine.py"), behaviour,
               *([] if number is None else [str(number)])]
    if launcher == "env":
        return ["env", *command]
    if launcher == "fork":
        return [sys.executable, str(folder / "fork.py"), *command]
    return ["sh", str(folder / f"{launcher}.sh"), *command] if launcher else command


def recorded(folder: Path) -> list[int]:
    return [int(word) for word in (folder / "pids").read_text().split()]


def running(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie does not (it waits for a reaper, which some containers'
    first process never is)."""
    if not Path("/proc/self/stat").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_bytes().rpartition(b")")[2].split()[0] not in (
            b"Z", b"X")
    except OSError:
        return False


def assert_none_left(folder: Path, started: int = 1) -> None:
    """At least ``started`` processes recorded, and none running a few seconds later."""
    pids = recorded(folder)
    assert len(pids) >= started, pids
    deadline = time.monotonic() + 3.0
    while (left := [pid for pid in pids if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"left running: {left} of {pids}"


def tune(folder: Path, args: list[str], bound: float, preludes: tuple[str, ...] = (),
         guard: Path | None = None):
    """``tune ARGS`` in ``folder``, given its documented ``bound`` plus ``BOUND_SLACK`` seconds
    (``subprocess.TimeoutExpired`` beyond), with no traceback."""
    forks = tune_forks(*([guard] if guard else []))
    done = forks.run([str(arg) for arg in args], folder, forks.environment(), preludes,
                     timeout=bound + BOUND_SLACK)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    return done


def short_handshake(seconds: float = SHORT_HANDSHAKE) -> tuple[str]:
    return (f"import engine.external.process as process\nprocess.HANDSHAKE_SECONDS = {seconds}\n",)


def config(folder: Path, command: list[str], depth: object = 0, name: str = "eng.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump({
        "run": {"name": "eng", "seed": 11},
        "engine": {"command": command},
        "params": {"weight": {"low": 0.5, "high": 2.0}, "bias": {"low": -0.5, "high": 0.5}},
        "search": {"depth": depth},
        "evaluation": {"games": 6},
        "cmaes": {"popsize": 4, "max_generations": 2},
        "validation": {"games": 6, "top_k": 1, "reference": "start"},
    }))
    return path


def weights(folder: Path, name: str, depth: object, weight: float = 1.0) -> Path:
    path = folder / name
    path.write_text(f"format: tune2048-weights\nversion: 3\nengine: stub 1.0\ndepth: {depth}\n"
                    f"weights: {{weight: {weight}, bias: 0.0}}\n")
    return path


def one_line(text: str) -> str:
    assert text.count("\n") == 1, text
    return text


def given_up(done) -> str:
    """The last line of a command that played its unit again after each failure (``RETRIES``
    times): the one that gives up, every line before it saying it plays the unit again (beside
    the progress lines of games played off a terminal, ``compare: 0 of 60 games ...``)."""
    *again, last = [line for line in done.stderr.splitlines()
                    if not line.startswith(("compare: ", "play: "))]
    assert len(again) == RETRIES and all(line.endswith("; playing its unit again")
                                         for line in again), done.stderr
    assert last.startswith(f"tune: error: candidate 0: the engine failed a unit and its "
                           f"{RETRIES} retries: engine "), last
    return last


# ---- every bound a deadline on its whole exchange ----------------------------------------------

TRICKLES = [("blank-lines", EVERY), ("new-params", EVERY), ("one-slow-line", EVERY)]


@pytest.mark.parametrize(("behaviour", "every"), TRICKLES)
def test_a_handshake_that_trickles_fails_at_its_deadline(folder, behaviour, every):
    with pytest.raises(EngineFailure, match=r"did not finish its handshake within 1 s \(request: "
                                            r"'tune2048 1'\)"):
        EngineProcess(engine(folder, behaviour, every), handshake_timeout=1.0)
    assert_none_left(folder)


@pytest.mark.parametrize("every", [0.1, 0.01])
def test_a_traced_game_that_trickles_fails_at_the_game_timeout(folder, every):
    with EngineProcess(engine(folder, "slow-moves", every), game_timeout=1.0) as slow, \
            pytest.raises(EngineFailure, match=r"did not finish the game with seed 1 within 1 s "
                                               r"\(the game timeout\)"):
        list(slow.play(Search("depth", 0), [1, 2], trace=True))
    assert_none_left(folder)


def handshake_commands(folder: Path, command: list[str]) -> dict[str, list[str]]:
    """Every command that starts an engine and waits for its handshake."""
    line = shlex.join(command)
    path = config(folder, command)
    first, second = weights(folder, "a.yaml", 0), weights(folder, "b.yaml", 0, 1.5)
    return {
        "engine check": ["engine", "check", "--timeout", GAME_TIMEOUT, "--", *command],
        "engine defaults": ["engine", "defaults", "-o", "d.yaml", "--", *command],
        "dry run": ["--config", path, "--dry-run"],
        "play": ["play", "--engine", line, "--game-timeout", GAME_TIMEOUT],
        "compare": ["compare", first, second, "--engine", line, "--game-timeout", GAME_TIMEOUT,
                    "--games", 30, "--workers", 1],
        "noise": ["noise", "--config", path, "--games", 8, "--workers", 1],
    }


def test_every_command_ends_a_trickling_handshake_at_its_deadline(folder):
    commands = handshake_commands(folder, engine(folder, "new-params", EVERY))
    for name, args in commands.items():
        done = tune(folder, args, SHORT_HANDSHAKE, short_handshake())
        said = done.stdout if name == "engine check" else done.stderr
        assert done.returncode in (1, 2), (name, done.stderr)
        assert "did not finish its handshake within 1 s" in said, (name, said)
        assert not (folder / "d.yaml").exists() and not (folder / "outputs").exists()
    assert_none_left(folder, started=len(commands))


def test_a_real_run_ends_a_trickling_handshake_at_its_deadline(folder, no_ray):
    done = tune(folder, ["--config", config(folder, engine(folder, "blank-lines", EVERY))],
                SHORT_HANDSHAKE, short_handshake(), guard=no_ray)
    assert done.returncode == 2 and "did not finish its handshake within 1 s" in done.stderr
    assert not (folder / "outputs").exists()
    assert_none_left(folder)


@pytest.mark.slow  # the protocol's own 10 seconds
def test_a_line_every_second_keeps_no_handshake_past_ten_seconds(folder):
    done = tune(folder, ["engine", "check", "--", *engine(folder, "new-params", 1.0)], HANDSHAKE)
    assert done.returncode == 1
    assert "FAIL  handshake: engine " in done.stdout
    assert "did not finish its handshake within 10 s" in done.stdout
    assert_none_left(folder)


@pytest.mark.parametrize("every", [0.1, 0.02])  # the first: the issue's own example
def test_the_checker_ends_a_traced_game_that_trickles_at_its_timeout(folder, every):
    done = tune(folder, ["engine", "check", "--timeout", GAME_TIMEOUT, "--search", "depth:0",
                         "--", *engine(folder, "slow-moves", every)], HANDSHAKE + GAME_TIMEOUT)
    assert done.returncode == 1
    [failed] = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert failed.startswith("FAIL  games: engine ")
    assert "did not finish the game with seed 1 within 1 s (the game timeout)" in failed
    assert done.stdout.splitlines()[-1] == "1 of 2 checks passed"
    assert_none_left(folder)


def test_the_longest_timeout_allowed_is_waited_for_without_a_traceback(folder):
    done = tune(folder, ["play", "--engine", shlex.join(engine(folder, "stub")), "--games", 2,
                         "--game-timeout", 1e7], HANDSHAKE)  # beyond what one poll may wait
    assert done.returncode == 0, done.stderr
    refused = tune(folder, ["engine", "check", "--timeout", 1e8, "--", "x"], 0)
    assert refused.returncode == 2
    assert "--timeout must be a positive number of seconds, at most 1e+07, got 100000000.0" in (
        one_line(refused.stderr))
    assert_none_left(folder)


def test_the_help_of_timeout_says_what_the_doc_says(folder):
    done = tune(folder, ["engine", "check", "--help"], 0)
    assert "--timeout SECONDS the most one game may take, all its lines together, from its " \
           "request or the end of the game before" in " ".join(done.stdout.split())
    doc = " ".join((ROOT / "docs" / "engine-protocol.md").read_text().split())
    assert "Each bound is a deadline on the whole exchange it names, never on one line" in doc
    assert ("A game: the game timeout (`engine.game_timeout` in a config, `--game-timeout` of "
            "`tune play` and `tune compare`, `--timeout` of `tune engine check`") in doc


# ---- every write bounded ----------------------------------------------------------------------

def test_many_seeds_are_asked_for_in_lines_an_engine_reads(folder):
    seeds = [2**64 - 1 - i for i in range(2000)]  # 42,000 characters of seeds
    with EngineProcess(engine(folder, "stub")) as stub:
        assert [game.seed for game, _ in stub.play(Search("depth", 12), seeds)] == seeds
    assert_none_left(folder)


def test_an_engine_that_stops_reading_fails_at_the_deadline_of_the_request(folder):
    with EngineProcess(engine(folder, "deaf", DEAF_PARAMS), game_timeout=0.5) as deaf:
        names = [param.name for param in deaf.declaration.params]
        with pytest.raises(EngineFailure, match=r"did not answer within 0.5 s: it stopped "
                                                r"reading its input \(request: 'set w"):
            deaf.set_values(dict.fromkeys(names, 1.5))
    assert_none_left(folder)


@pytest.mark.slow  # four tries, each waiting its timeout
@pytest.mark.parametrize("command", ["play", "compare"])
def test_play_and_compare_end_an_engine_that_stops_reading(folder, command):
    names = [f"{'w' * 56}_{i:07d}" for i in range(DEAF_PARAMS)]
    for name, value in (("a.yaml", 1.0), ("b.yaml", 1.5)):
        write_weights(folder / name, WeightsFile(None, dict.fromkeys(names, value), 0,
                                                 engine="stub 1.0"))
    args = (["play", "--weights", "a.yaml", "--games", 2] if command == "play" else
            ["compare", "a.yaml", "b.yaml", "--games", 30, "--workers", 1])
    done = tune(folder, [*args, "--engine", shlex.join(engine(folder, "deaf", DEAF_PARAMS)),
                         "--game-timeout", GAME_TIMEOUT], TRIES * (HANDSHAKE + GAME_TIMEOUT))
    assert done.returncode == 1
    assert "did not answer within 1 s: it stopped reading its input" in given_up(done)
    assert_none_left(folder)


def test_the_checker_ends_an_engine_that_stops_reading_many_seeds(folder):
    """10,000 seeds of 20 digits: 210,000 characters, sent as requests of at most 4,096."""
    done = tune(folder, ["engine", "check", "--timeout", GAME_TIMEOUT, "--games", 10_000,
                         "--seed", 2**63, "--", *engine(folder, "deaf", 0)],
                HANDSHAKE + GAME_TIMEOUT)
    assert done.returncode == 1
    assert ("FAIL  games: engine " in done.stdout and "did not finish the game with seed "
            f"{2**63} within 1 s" in done.stdout)
    assert_none_left(folder)


# ---- no process left behind -----------------------------------------------------------------

ENDINGS = {  # how tune ends the engine: the behaviour that makes it end so, the game timeout
    # given, the exit status and what it says
    "timeout": ("asleep", GAME_TIMEOUT, 1, f"did not answer within {GAME_TIMEOUT:g} s"),
    "error": ("garbage", GAME_TIMEOUT, 1, "expected a 'game' line, got 'GAME OVER!'"),
    "normal": ("stub", 60, 0, ""),
}


SLOW = pytest.mark.slow  # four tries, each waiting its timeout


@pytest.mark.parametrize(("launcher", "ending"), [
    ("sh", "timeout"), ("sh", "error"), ("sh", "normal"),
    pytest.param("env", "timeout", marks=SLOW),
    pytest.param("fork", "timeout", marks=SLOW), ("fork", "error"),
    ("sidecar", "normal"), ("sidecar", "error"),
    pytest.param("stubborn", "timeout", marks=SLOW), ("stubborn", "normal"),
])
def test_an_engine_behind_a_launcher_leaves_no_process_however_it_ends(folder, launcher, ending):
    behaviour, timeout, status, said = ENDINGS[ending]
    line = shlex.join(engine(folder, behaviour, launcher=launcher))
    done = tune(folder, ["play", "--engine", line, "--games", 2, "--game-timeout", timeout],
                TRIES * (HANDSHAKE + GAME_TIMEOUT))  # a normal end ends long before its bound
    assert_none_left(folder, started=1 + (launcher != "env") + (launcher == "sidecar"))
    assert done.returncode == status, done.stderr
    assert said in (given_up(done) if status else said)


@pytest.mark.parametrize("launcher", ["sh", "fork", "stubborn"])
def test_ctrl_c_to_the_checker_ends_an_engine_behind_a_launcher(folder, launcher):
    forks = tune_forks()
    fork = forks.start([RELEASE_SIGNALS, TUNE_MAIN], [
        "tune", "engine", "check", "--", *engine(folder, "asleep", launcher=launcher)],
        folder, forks.environment(), timeout=HANDSHAKE)
    asleep = folder / "pids.asleep"  # the engine is in its first request, answering nothing
    deadline = time.monotonic() + HANDSHAKE
    while not asleep.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert asleep.exists()
    os.kill(fork.pid, signal.SIGINT)
    done = forks.finish(fork, timeout=BOUND_SLACK)
    assert done.returncode == 130 and one_line(done.stderr) == "tune: interrupted\n"
    assert "Traceback" not in done.stdout + done.stderr
    assert_none_left(folder, started=2)


def test_an_engine_dropped_unclosed_is_ended_by_its_finalizer(folder):
    dropped = EngineProcess(engine(folder, "stub", launcher="sidecar"))
    assert dropped.declaration.name == "stub 1.0"
    del dropped
    gc.collect()
    assert_none_left(folder, started=3)


# ---- an engine's own depths ---------------------------------------------------------------------

REFUSED = "engine 'stub 1.0' does not search at depth:13 (it declares depth:0 to depth:12)"


def test_an_engine_plays_at_every_depth_it_declares_and_no_other(folder):
    command = engine(folder, "stub")
    line = shlex.join(command)
    deep, deeper = weights(folder, "deep.yaml", 12), weights(folder, "deeper.yaml", 13)
    accepted = [
        ["play", "--engine", line, "--depth", 12, "--games", 2, "--json"],
        ["play", "--engine", line, "--weights", deep, "--games", 2, "--json"],
        ["compare", deep, weights(folder, "other.yaml", 10, 1.5), "--engine", line, "--depth",
         11, "--games", 30, "--workers", 1],
        ["engine", "defaults", "--depth", 12, "-o", "d.yaml", "--", *command],
        ["--config", config(folder, command, 12, "deep-run.yaml"), "--dry-run"],
        ["noise", "--config", config(folder, command, 9, "run.yaml"), "--depth", 12, "--games",
         8, "--workers", 1],
    ]
    for args in accepted:
        done = tune(folder, args, HANDSHAKE + GAME_TIMEOUT)
        assert done.returncode == 0, (args, done.stderr)
    assert read_weights(folder / "d.yaml").depth == 12
    refused = [
        (["play", "--engine", line, "--depth", 13], f"--depth: {REFUSED}"),
        (["play", "--engine", line, "--weights", deeper], f"{deeper}: {REFUSED}"),
        (["engine", "defaults", "--depth", 13, "-o", "e.yaml", "--", *command],
         f"--depth: {REFUSED}"),
        (["--config", config(folder, command, 13, "deeper-run.yaml"), "--dry-run"],
         f"search.depth: {REFUSED}"),
        (["noise", "--config", config(folder, command, 9, "run.yaml"), "--depth", 13],
         f"--depth: {REFUSED}"),
        (["play", "--depth", 9], "--depth: expected an integer from 0 to 8, got 9"),  # ours
        (["noise", "--config", ROOT / "configs" / "classic-d2.yaml", "--depth", 9],
         "--depth: expected an integer from 0 to 5 in a tuning run, got 9"),
    ]
    for args, said in refused:
        done = tune(folder, args, HANDSHAKE)
        assert done.returncode == 2 and said in one_line(done.stderr), (args, done.stderr)
    assert not (folder / "e.yaml").exists() and not (folder / "outputs").exists()
    assert_none_left(folder, started=len(accepted) + 4)
