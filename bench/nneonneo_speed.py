"""Our engine against nneonneo/2048-ai's own, at its own depth rule, on the same positions.

nneonneo/2048-ai, the widely used C++ expectimax engine of the same design, searches
``max(3, distinct tiles - 2)`` chance layers a move: our ``depth: auto``. This builds its source
(a checkout given with ``--source``; it is never shipped here) as it is, loads it with ctypes,
and times one decision of each engine, alternately, on the
same positions: boards from depth-1 games of the classic reference weights (its own constants),
spread over the game by their number of distinct tiles. Both run one thread, cutoff 1e-4. Per
group of positions it prints decisions per second of each, our speed over its own, and how often
the two chose the same move (they are not bit-identical: its transposition table lives for one
root move and reuses deeper results, its arithmetic is float32). It also prints our decisions
per second at the other policies on the same positions, and writes every figure and position
to ``--out`` (JSON).

Without a compiler or a source it says so and exits 0: it never runs in CI. Our engine is
reached through its documented API alone (docs/api.md: ``Solver``).

Run: ``python bench/nneonneo_speed.py --source PATH/TO/2048-ai`` (a checkout:
``git clone https://github.com/nneonneo/2048-ai``), ``--per-group N`` positions per group.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engine.atomic import atomic_write

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "engine" / "baselines" / "classic-reference.yaml"
GROUPS = ((3, 6), (7, 8), (9, 9), (10, 10))  # distinct tiles: depth 3-4, 5-6, 7 and 8
OUR_POLICIES = ("auto", "auto:cap=5", "3", "4", "nodes:200000", "nodes:2000000")
SOURCE_FILES = ("2048.cpp", "2048.h", "config.h", "platdefs.h")  # what its build reads


def distinct_tiles(board: int) -> int:
    """The distinct tiles on a 64-bit board (docs/rules.md: a rank in each 4-bit cell)."""
    return len({(board >> (4 * cell)) & 0xF for cell in range(16)} - {0})


def source_digest(source: Path) -> str:
    """A SHA-256 of the files a build reads from the checkout ``source``: two checkouts with the
    same digest build the same engine, wherever they lie."""
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        path = source / name
        digest.update(f"{name}\0".encode())
        digest.update(path.read_bytes() if path.is_file() else b"(none)")
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"


def build(source: Path, into: Path) -> Path | str:
    """Its shared library, built from the checkout ``source`` in ``into``; or why it cannot
    be."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        return "no C++ compiler (g++ or c++) on PATH"
    if not (source / "2048.cpp").is_file():
        return f"{source}: not a checkout of nneonneo/2048-ai (no 2048.cpp)"
    into.mkdir(parents=True, exist_ok=True)
    for name in SOURCE_FILES:
        if (source / name).is_file():
            shutil.copy(source / name, into / name)
    library = into / "nneonneo2048.so"
    done = subprocess.run([compiler, "-O3", "-std=c++11", "-fPIC", "-shared", "-o", str(library),
                           str(into / "2048.cpp")], capture_output=True, text=True, check=False)
    if done.returncode:
        return f"the build failed: {done.stderr.strip().splitlines()[-1:]}"
    return library


def load(library: Path) -> ctypes.CDLL:
    """The built library, its tables initialised: ``find_best_move(board)`` is ready."""
    engine = ctypes.CDLL(str(library))
    engine.find_best_move.argtypes = [ctypes.c_uint64]
    engine.find_best_move.restype = ctypes.c_int
    engine.init_tables()
    return engine


@contextlib.contextmanager
def quiet_stdout():
    """Its engine prints every move it scores: sent to /dev/null while it decides."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def positions(per_group: int) -> list[tuple[int, int]]:
    """(board, distinct tiles): ``per_group`` boards of each group, from depth-1 games."""
    from engine import Solver

    solver = Solver.from_file(REFERENCE, depth=1)
    wanted = {group: [] for group in GROUPS}
    seed = 1
    while any(len(boards) < per_group for boards in wanted.values()) and seed < 500:
        seen: list[int] = []
        solver.play(seed, on_move=lambda board, move, score, seen=seen: seen.append(board))
        for board in seen[::37]:
            tiles = distinct_tiles(board)
            for low, high in GROUPS:
                if low <= tiles <= high and len(wanted[(low, high)]) < per_group:
                    wanted[(low, high)].append((board, tiles))
        seed += 1
    return [item for group in GROUPS for item in wanted[group]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help="a checkout of nneonneo/2048-ai")
    parser.add_argument("--per-group", type=int, default=10,
                        help="positions per group of distinct tiles (default 10)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "nneonneo_auto.json")
    args = parser.parse_args()
    if args.source is None:
        print("skipped: no --source (a checkout of nneonneo/2048-ai)")
        return
    with tempfile.TemporaryDirectory() as build_dir:
        library = build(args.source, Path(build_dir))
        if isinstance(library, str):
            print(f"skipped: {library}")
            return
        compare(load(library), args)


def compare(theirs, args: argparse.Namespace) -> None:
    from engine import Solver

    ours = {policy: Solver.from_file(REFERENCE, depth=policy) for policy in OUR_POLICIES}
    boards = positions(args.per_group)
    for solver in ours.values():
        solver.decide(boards[0][0])  # compiled and loaded before any timing
    rows = []
    for board, tiles in boards:
        start = time.perf_counter()
        with quiet_stdout():
            their_move = theirs.find_best_move(ctypes.c_uint64(board))
        their_seconds = time.perf_counter() - start
        row = {"board": f"{board:#018x}", "distinct_tiles": tiles, "theirs_move": their_move,
               "theirs_seconds": their_seconds}
        for policy, solver in ours.items():
            start = time.perf_counter()
            decision = solver.decide(board)
            row[policy] = {"seconds": time.perf_counter() - start, "depth": decision.depth,
                           "positions": decision.positions,
                           "move": -1 if decision.move is None else int(decision.move)}
        rows.append(row)
    report(rows)
    atomic_write(args.out, json.dumps({"engine": source_digest(args.source), "rows": rows},
                                      indent=1) + "\n")
    print(f"wrote {args.out}")


def report(rows: list[dict]) -> None:
    print("decisions per second at nneonneo's rule, max(3, distinct tiles - 2), one thread:")
    print(f"{'distinct tiles':>15} {'boards':>6} {'depth':>5} {'theirs/s':>9} {'ours/s':>9} "
          f"{'ours/theirs':>11} {'same move':>9}")
    for low, high in (*GROUPS, (GROUPS[0][0], GROUPS[-1][1])):
        group = [r for r in rows if low <= r["distinct_tiles"] <= high]
        if not group:
            continue
        theirs = sum(r["theirs_seconds"] for r in group)
        ours = sum(r["auto"]["seconds"] for r in group)
        same = sum(r["theirs_move"] == r["auto"]["move"] for r in group) / len(group)
        depth = statistics.fmean(r["auto"]["depth"] for r in group)
        label = "all" if (low, high) == (GROUPS[0][0], GROUPS[-1][1]) else f"{low}-{high}"
        print(f"{label:>15} {len(group):>6} {depth:>5.1f} {len(group) / theirs:>9.2f} "
              f"{len(group) / ours:>9.2f} {theirs / ours:>10.2f}x {same:>9.0%}")
    print("\nours at other policies on the same boards: decisions/s, mean depth, positions/s")
    for policy in OUR_POLICIES:
        seconds = sum(r[policy]["seconds"] for r in rows)
        depth = statistics.fmean(r[policy]["depth"] for r in rows)
        evaluated = sum(r[policy]["positions"] for r in rows)
        print(f"{policy:>15} {len(rows) / seconds:>9.2f} {depth:>5.1f} {evaluated / seconds:>13,.0f}")


if __name__ == "__main__":
    main()
