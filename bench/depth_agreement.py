"""Depth policies against a deeper search: how often each picks the move a fixed depth 4 (or
``--reference``) picks, and what it costs in positions evaluated, on the same positions.

A policy cheap enough to tune at is worth tuning at only if it plays like the deeper search that
will be run: this measures that on boards from real games (depth-2 games of ``--weights``, every
``--every``-th position), deterministically (moves and positions evaluated are the same on any
machine; the seconds are this machine's). Per policy: the share of positions where its move is
the reference's, its mean depth, and its positions evaluated per move over depth 3's.

Run: ``python bench/depth_agreement.py [--weights runs/classic-d3/best.yaml] [--positions 3000]``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POLICIES = ("3", "nodes:100000", "nodes:150000", "nodes:200000", "nodes:300000", "nodes:400000",
            "auto:cap=4")


def positions(weights: str, count: int, every: int) -> list[int]:
    """Every ``every``-th board of depth-2 games with ``weights``, seeds 1, 2, ..."""
    from engine import Solver

    solver = Solver.from_file(weights, depth=2)
    boards: list[int] = []
    seed = 1
    while len(boards) < count:
        seen: list[int] = []
        solver.play(seed, on_move=lambda board, move, score, seen=seen: seen.append(board))
        boards.extend(seen[::every])
        seed += 1
    return boards[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=str(ROOT / "runs" / "classic-d3" / "best.yaml"))
    parser.add_argument("--positions", type=int, default=3000)
    parser.add_argument("--every", type=int, default=7, help="every Nth position of a game")
    parser.add_argument("--reference", default="4", help="the policy to agree with (default 4)")
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    args = parser.parse_args()

    from engine import Solver

    boards = positions(args.weights, args.positions, args.every)
    reference = Solver.from_file(args.weights, depth=args.reference)
    start = time.perf_counter()
    wanted = [reference.decide(board) for board in boards]
    reference_seconds = time.perf_counter() - start
    depth3 = Solver.from_file(args.weights, depth=3)
    base = sum(depth3.decide(board).positions for board in boards)
    print(f"{len(boards):,} positions from depth-2 games of {args.weights}; reference: depth "
          f"{args.reference} ({sum(d.positions for d in wanted) / base:.2f}x depth 3's "
          f"positions, {reference_seconds:.1f} s)")
    print(f"{'policy':>15} {'same move':>9} {'mean depth':>10} {'positions/depth 3':>17} "
          f"{'seconds':>8}")
    for policy in args.policies:
        solver = Solver.from_file(args.weights, depth=policy)
        start = time.perf_counter()
        decisions = [solver.decide(board) for board in boards]
        seconds = time.perf_counter() - start
        same = sum(d.move == w.move for d, w in zip(decisions, wanted)) / len(boards)
        depth = statistics.fmean(d.depth for d in decisions)
        cost = sum(d.positions for d in decisions) / base
        print(f"{policy:>15} {same:>9.1%} {depth:>10.2f} {cost:>16.2f}x {seconds:>8.1f}")


if __name__ == "__main__":
    main()
