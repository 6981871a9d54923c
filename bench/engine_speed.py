"""Engine speed: decisions and moves evaluated per second at depths 1-3, games per second at 1-2.

Single process, single thread, a weights file (default: the classic reference weights), cutoff
1e-4, transposition table on, on 300 fixed mid-game boards (every 25th position from move 100 on,
of depth-1 games with seeds 1, 2, ... played with those weights), passed over repeatedly for at
least ``--seconds`` per depth, the median pass reported (this VM's speed varies from moment to
moment); the moves each decision evaluates are counted once, with ``Solver.decide``. Also prints
the first-call compile time and the cached start time, each measured in a fresh subprocess.
The engine is reached through its documented API alone (docs/api.md: ``Solver``).
Run: ``python bench/engine_speed.py [--weights FILE] [--games N]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "engine" / "baselines" / "classic-reference.yaml"
START_SNIPPET = (
    "import sys, time; t = time.perf_counter(); from engine import Solver; "
    "s = Solver.from_file(sys.argv[1], depth=1); s.best_move(0x1100); "
    "print(time.perf_counter() - t)"
)


def start_seconds(weights: Path, cache_dir: str | None) -> float:
    """Seconds for a fresh process to import the engine and make one decision."""
    env = {"NUMBA_CACHE_DIR": cache_dir} if cache_dir else {}
    out = subprocess.run(
        [sys.executable, "-c", START_SNIPPET, str(weights)], capture_output=True, text=True,
        check=True, env={**os.environ, **env}, cwd=ROOT,
    )
    return float(out.stdout.strip().splitlines()[-1])


def fixed_boards(weights: Path, count: int = 300) -> list[int]:
    from engine import Solver

    solver = Solver.from_file(weights, depth=1)
    boards: list[int] = []
    seed = 1
    while len(boards) < count:
        positions: list[int] = []

        def record(board: int, _move, _score, positions=positions) -> None:
            positions.append(board)

        solver.play(seed, on_move=record)
        boards.extend(positions[100::25])
        seed += 1
    return boards[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--weights", type=Path, default=REFERENCE,
                        help="weights file to play (default: classic-reference)")
    parser.add_argument("--games", type=int, default=10, help="games per depth (default 10)")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="time each depth for at least this long (default 2); the median "
                             "pass over the boards is reported")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as cache:
        cold = start_seconds(args.weights, cache)
        warm = start_seconds(args.weights, cache)
    shutil.rmtree(cache, ignore_errors=True)
    print(f"machine: {platform.processor() or platform.machine()}, python "
          f"{platform.python_version()}")
    print(f"start (import + first decision): first call, empty cache {cold:.2f} s; "
          f"cached {warm:.2f} s")

    from engine import Solver

    boards = fixed_boards(args.weights)
    print(f"\n{len(boards)} mid-game boards, {args.weights.name}, cutoff 1e-4, TT on")
    print(f"{'depth':>5} {'decisions/s':>12} {'moves evaluated/s':>18} {'moves/decision':>15}")
    for depth in (1, 2, 3):
        solver = Solver.from_file(args.weights, depth=depth)
        # a board's search evaluates the same positions every time: counted once, untimed
        evaluated = sum(solver.decide(board).positions for board in boards)
        rates = []  # decisions/s of each pass over the boards
        spent = 0.0
        while spent < args.seconds or len(rates) < 3:
            started = time.perf_counter()
            for board in boards:
                solver.best_move(board)
            seconds = time.perf_counter() - started
            spent += seconds
            rates.append(len(boards) / seconds)
        decisions = sorted(rates)[len(rates) // 2]
        per_decision = evaluated / len(boards)
        print(f"{depth:>5} {decisions:>12,.0f} {decisions * per_decision:>18,.0f} "
              f"{per_decision:>15,.0f}")

    print(f"\ngames from a fresh start ({args.games} per depth, seeds 1..{args.games})")
    print(f"{'depth':>5} {'games/s':>9} {'mean score':>11} {'moves/s':>9}")
    for depth in (1, 2):
        solver = Solver.from_file(args.weights, depth=depth)
        started = time.perf_counter()
        results = [solver.play(seed) for seed in range(1, args.games + 1)]
        seconds = time.perf_counter() - started
        moves = sum(r.moves for r in results)
        print(f"{depth:>5} {args.games / seconds:>9.2f} "
              f"{np.mean([r.score for r in results]):>11,.0f} {moves / seconds:>9,.0f}")


if __name__ == "__main__":
    main()
