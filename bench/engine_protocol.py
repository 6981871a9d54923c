"""What the engine protocol costs: the C example engine (examples/engines/c_engine.c) playing the
same seeded games in its own loop (``--play``) and through the protocol, driven by tune2048's
``EngineProcess`` as a tuning run drives it, the two timed alternately in fresh processes.

Each timing is the wall time from starting the engine to its last game (start-up, the tables and
every game), the best of ``--repeat`` (this machine's speed moves from minute to minute; the
best is what each can do). The goal: the protocol's time at most 1.03 times the loop's at
depth 2. Needs a C compiler (``cc``); says so and stops where there is none. tune2048 is reached
through its documented seams alone: ``engine.external``'s ``EngineProcess`` and ``Search``, and the
game line of docs/engine-protocol.md.

Run: ``python bench/engine_protocol.py`` (about a minute: 20 games at depth 2, 3 repeats).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from engine.external import EngineProcess, Search

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "examples" / "engines" / "c_engine.c"


class Game(NamedTuple):
    """A game line's fields, its time aside: what both ways must agree on."""

    seed: int
    score: int
    tile: int
    moves: int
    positions: int


def own_loop(binary: Path, search: str, seeds: list[int]) -> tuple[float, list[Game]]:
    """Its wall time, and its games (its ``game key=value ...`` lines)."""
    started = time.perf_counter()
    out = subprocess.run([str(binary), "--play", search, *map(str, seeds)], capture_output=True,
                         text=True, check=True).stdout
    seconds = time.perf_counter() - started
    games = [dict(word.split("=", 1) for word in line.split()[1:]) for line in out.splitlines()]
    return seconds, [Game(*(int(game[key]) for key in Game._fields)) for game in games]


def through_protocol(binary: Path, search: str, seeds: list[int]) -> tuple[float, list[Game]]:
    started = time.perf_counter()
    with EngineProcess([str(binary)]) as engine:
        games = [game for game, _steps in engine.play(Search.parse(search), seeds)]
    seconds = time.perf_counter() - started
    return seconds, [Game(*(getattr(game, key) for key in Game._fields)) for game in games]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--games", type=int, default=20, help="seeds 1..N (default 20)")
    parser.add_argument("--search", default="depth:2", help="depth:N or auto (default depth:2)")
    parser.add_argument("--repeat", type=int, default=3, help="timings of each (default 3)")
    args = parser.parse_args()
    compiler = shutil.which("cc")
    if compiler is None:
        print("skipped: no C compiler (cc) to build examples/engines/c_engine.c")
        return 0
    seeds = list(range(1, args.games + 1))
    with tempfile.TemporaryDirectory() as folder:
        binary = Path(folder) / "c_engine"
        subprocess.run([compiler, "-O2", "-o", str(binary), str(SOURCE), "-lm"], check=True)
        loop_times, protocol_times = [], []
        for _ in range(args.repeat):
            seconds, loop_games = own_loop(binary, args.search, seeds)
            loop_times.append(seconds)
            seconds, protocol_games = through_protocol(binary, args.search, seeds)
            protocol_times.append(seconds)
            if loop_games != protocol_games:
                print("the two ways played different games", file=sys.stderr)
                return 1
    loop, protocol = min(loop_times), min(protocol_times)
    moves = sum(game.moves for game in loop_games)
    print(f"C example engine, {args.games} games at {args.search} ({moves:,} moves), "
          f"best of {args.repeat}")
    print(f"its own loop       {loop:8.3f} s")
    print(f"through protocol   {protocol:8.3f} s")
    print(f"protocol / loop    {protocol / loop:8.3f}   (goal: at most 1.03)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
