"""The example Python engine with one fault, named by the first argument: what
tests/engine/external runs to see each fault found and said in one line."""

from __future__ import annotations

import importlib.util
import itertools
import os
import random
import sys
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "engines" / "python_engine.py"
spec = importlib.util.spec_from_file_location("python_engine", EXAMPLE)
engine = importlib.util.module_from_spec(spec)
spec.loader.exec_module(engine)
real_play, real_spawn = engine.play, engine.spawn
fault = sys.argv[1]


class Rewritten:
    """stdout with some of the engine's lines replaced, line by line as they are completed."""

    def __init__(self, rewrite):
        self.rewrite, self.out, self.held = rewrite, sys.stdout, ""

    def write(self, text: str) -> int:
        *lines, self.held = (self.held + text).split("\n")
        self.out.write("".join(self.rewrite(line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        self.out.flush()


def chained_slide(ranks):
    """Merges that go on: 2 2 4 becomes 8 in one move."""
    out, points = [], 0
    for rank in (rank for rank in ranks if rank):
        if out and out[-1] == rank:
            out[-1] += 1
            points += 1 << out[-1]
        else:
            out.append(rank)
    return out + [0] * (4 - len(out)), points


def spawn_with(four: float, first_cell: bool):
    def spawn(board, rng):
        empty = [cell for cell, rank in enumerate(board) if rank == 0]
        cell = empty[0] if first_cell else rng.choice(empty)
        board[cell] = 2 if rng.random() < four else 1
        return cell, 1 << board[cell]
    return spawn


class Requests:
    """stdin with ``play auto`` read as ``play depth:0``, saying whether the request being
    answered asked for ``auto``."""

    def __init__(self):
        self.stdin, self.auto = sys.stdin, False

    def readline(self) -> str:
        return self._read(self.stdin.readline())

    def __iter__(self):
        return (self._read(line) for line in self.stdin)

    def _read(self, line: str) -> str:
        words = line.split()
        self.auto = words[1:2] == ["auto"]
        return " ".join([words[0], "depth:0", *words[2:]]) + "\n" if self.auto else line


calls = itertools.count()


def play_after(action):
    def play(seed, *args, **kwargs):
        if next(calls) == 1:
            action()
        real_play(seed, *args, **kwargs)
    return play


def crash():
    print("bad_engine: out of memory, giving up", file=sys.stderr, flush=True)
    os._exit(3)


if fault == "silent":
    sys.stdin.readline()
    sys.exit(0)
elif fault == "version-2":
    sys.stdout = Rewritten(lambda line: "ready 2" if line == "ready 1" else line)
elif fault == "garbage":
    sys.stdout = Rewritten(lambda line: "GAME OVER!" if line.startswith("game ") else line)
elif fault == "crash":
    engine.play = play_after(crash)
elif fault == "hang":
    engine.play = play_after(lambda: time.sleep(3600))
elif fault == "not-deterministic":
    seeds, real_random = itertools.count(), random.Random
    engine.random.Random = lambda seed: real_random(f"{seed} {next(seeds)}")
elif fault == "chained-merges":
    engine.slide = chained_slide
elif fault == "many-fours":
    engine.spawn = spawn_with(four=0.3, first_cell=False)
elif fault == "first-empty-cell":
    engine.spawn = spawn_with(four=0.1, first_cell=True)
elif fault == "crash-on-seed":  # the seed in the file named after the fault (none if empty)
    doomed = Path(sys.argv[2]).read_text().strip()
    engine.play = lambda seed, *args, **kwargs: crash() if str(seed) == doomed else real_play(
        seed, *args, **kwargs)
elif fault == "crash-once":  # the first process to play, of those given the file after the name
    marker = Path(sys.argv[2])
    engine.play = play_after(lambda: marker.exists() or (marker.touch(), crash()))
elif fault == "small-seeds":  # a seed of 2^63 and more is refused, as a signed 64-bit reader would
    engine.play = lambda seed, depth, weights, say, trace: (
        say(f"error not a seed: {seed}") if seed >= 1 << 63 else
        real_play(seed, depth, weights, say, trace))
elif fault == "idle-parameter":
    engine.PARAMS["unused_weight"] = (1.0, 0.0, 2.0)
elif fault == "carried-cache":  # a table of positions' values, by board and depth left, kept
    # from game to game (never cleared, not even when a value is set): used at depth 1 (not at
    # 0), it makes a game there depend on the games before it
    engine.MAX_DEPTH = 1
    table, plain_expected = {}, engine.expected

    def remembered(board, depth, weights, counted):
        key = tuple(board), depth
        if key not in table:
            table[key] = plain_expected(board, depth, weights, counted)
        return table[key]

    def play_remembering(seed, depth, *args, **kwargs):
        engine.expected = remembered if depth else plain_expected
        real_play(seed, depth, *args, **kwargs)

    engine.play = play_remembering
elif fault in ("auto-parameter", "auto-parameter-acts"):  # a weight only its own rule uses (auto
    # plays as depth:0, plus the weight times the top left cell's rank), said with acts=auto or not
    engine.MAX_DEPTH = 0
    engine.PARAMS["corner_weight"] = (100.0, 0.0, 1000.0)
    requests = sys.stdin = Requests()
    plain_value = engine.value
    engine.value = lambda board, weights, counted: plain_value(board, weights, counted) + (
        weights["corner_weight"] * board[0] if requests.auto else 0.0)
    acts = " acts=auto" if fault.endswith("-acts") else ""
    sys.stdout = Rewritten(lambda line: "search auto\nready 1" if line == "ready 1" else
                           line + acts if line.startswith("param corner_weight ") else line)
else:
    sys.exit(f"bad_engine: no fault named {fault!r}")
sys.exit(engine.main())
