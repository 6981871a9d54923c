"""The price of each depth policy: games per CPU-hour, and, for policies too dear to play often,
seconds per move by how crowded the board is.

Games (``--policies``): every policy plays the same seeds, 1 to ``--games``, with ``--weights``.
Per policy: CPU-seconds a game (the playing process's clock: the engine runs one thread, so a
loaded machine does not inflate it), games per CPU-hour, positions evaluated a game (the price
in a unit that is the same on any machine), mean score and the 8192 and 16384 rates.

Per move (``--per-move``): boards from depth-3 games of ``--weights`` (seeds 1 to
``--move-games``), grouped by their number of distinct tiles, ``--per-group`` of each group
spread over the games; per policy and group, CPU-seconds and positions of one decision. Weighted
by how many moves of those games fall in each group, they price a whole game at the policy: an
estimate for uncapped ``auto`` (one game of it in nneonneo/2048-ai's engine took 80 minutes of one
core), which a game played with ``--policies auto --games 1`` checks.

Every finished game and decision is written to ``--out`` (JSON) at once, so that run again with
the same arguments it goes on where it was.

Run: ``python bench/depth_price.py --games 10 --policies 3 4 auto:cap=4`` and
``python bench/depth_price.py --per-move auto auto:cap=5``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "classic-reference"

_solvers: dict = {}  # in each worker process: a Solver per policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=REFERENCE)
    parser.add_argument("--policies", nargs="*", default=[], help="policies to play games at")
    parser.add_argument("--games", type=int, default=10, help="games per policy (default 10)")
    parser.add_argument("--per-move", nargs="*", default=[], help="policies to price per move")
    parser.add_argument("--move-games", type=int, default=2,
                        help="depth-3 games the per-move boards come from (default 2)")
    parser.add_argument("--per-group", type=int, default=5,
                        help="boards per number of distinct tiles (default 5)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "data" / "depth_price.json")
    args = parser.parse_args()

    from engine.depth import parse_depth

    for policy in [*args.policies, *args.per_move]:
        try:
            parse_depth(policy)  # a bad policy stops here, before anything is played
        except ValueError as err:
            raise SystemExit(f"depth_price.py: {policy}: {err}") from None
    held = json.loads(args.out.read_text()) if args.out.exists() else {}
    if held.get("weights", args.weights) != args.weights:
        raise SystemExit(f"{args.out}: holds prices for {held['weights']}; name another --out")
    held["weights"] = args.weights
    games = held.setdefault("games", {})
    moves = held.setdefault("moves", {})
    groups = held.setdefault("groups", {})

    tasks = [("game", policy, seed) for seed in range(1, args.games + 1)
             for policy in args.policies if str(seed) not in games.get(policy, {})]
    if args.per_move:
        if not groups:
            groups.update(board_groups(args.weights, args.move_games, args.per_group))
        tasks += [("move", policy, board) for policy in args.per_move
                  for group in groups.values() for board in group["boards"]
                  if board not in moves.get(policy, {})]
    if tasks:
        print(f"pricing {len(tasks)} games and decisions on {args.jobs} processes")
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(_price, args.weights, *task) for task in tasks]
            for future in as_completed(futures):
                kind, policy, key, figures = future.result()
                (games if kind == "game" else moves).setdefault(policy, {})[key] = figures
                write(args.out, held)
    report_games(games, args.policies)
    report_moves(moves, groups, args.per_move)


def write(path: Path, data: dict) -> None:
    from engine.atomic import atomic_write

    atomic_write(path, json.dumps(data, indent=1) + "\n")


def board_groups(weights: str, games: int, per_group: int) -> dict[str, dict]:
    """By number of distinct tiles: the moves of ``games`` depth-3 games that fall there, and
    ``per_group`` of their boards, evenly spread."""
    from engine import Solver
    from engine.board import distinct_tiles

    solver = Solver.from_file(weights, depth=3)
    seen: dict[int, list[int]] = {}
    for seed in range(1, games + 1):
        solver.play(seed, on_move=lambda board, move, score: seen.setdefault(
            distinct_tiles(board), []).append(board))
    groups = {}
    for tiles, boards in sorted(seen.items()):
        step = max(len(boards) // per_group, 1)
        groups[str(tiles)] = {"moves_per_game": len(boards) / games,
                              "boards": [f"{b:#018x}" for b in boards[::step][:per_group]]}
    return groups


def _price(weights: str, kind: str, policy: str, key) -> tuple[str, str, str, dict]:
    """In a worker: one game (``key``: its seed) or one decision (``key``: the board)."""
    from engine import Solver

    solver = _solvers.get(policy)
    if solver is None:
        solver = _solvers[policy] = Solver.from_file(weights, depth=policy)
        solver.decide(0x1002)  # compiled and loaded before any clock runs
    start = time.process_time()
    if kind == "game":
        game = solver.play(key)
        figures = {"score": game.score, "max_tile": game.max_tile, "moves": game.moves,
                   "positions": game.moves_evaluated}
    else:
        decision = solver.decide(int(key, 16))
        figures = {"depth": decision.depth, "positions": decision.positions}
    figures["cpu_seconds"] = time.process_time() - start
    return kind, policy, str(key), figures


def report_games(games: dict, policies: list[str]) -> None:
    if not policies:
        return
    print("games: CPU-seconds a game, games per CPU-hour, positions evaluated a game, mean score")
    print(f"{'policy':>16} {'games':>5} {'cpu s/game':>10} {'games/cpu-h':>11} {'positions':>11} "
          f"{'mean':>9} {'8192':>6} {'16384':>6}")
    for policy in policies:
        played = list(games.get(policy, {}).values())
        if not played:
            continue
        seconds = statistics.fmean(g["cpu_seconds"] for g in played)
        rates = [sum(g["max_tile"] >= t for g in played) / len(played) for t in (8192, 16384)]
        print(f"{policy:>16} {len(played):>5} {seconds:>10.3g} {3600 / seconds:>11,.0f} "
              f"{statistics.fmean(g['positions'] for g in played):>11.3g} "
              f"{statistics.fmean(g['score'] for g in played):>9,.0f} "
              f"{rates[0]:>6.0%} {rates[1]:>6.0%}")


def report_moves(moves: dict, groups: dict, policies: list[str]) -> None:
    if not policies or not groups:
        return
    print("\nper move, by distinct tiles: mean depth, CPU-seconds and positions of one decision")
    for policy in policies:
        priced = moves.get(policy, {})
        print(f"{policy}:\n{'tiles':>6} {'moves/game':>10} {'depth':>5} {'cpu s':>8} "
              f"{'positions':>11}")
        game_seconds = game_positions = 0.0
        complete = True
        for tiles, group in groups.items():
            done = [priced[b] for b in group["boards"] if b in priced]
            if not done:
                complete = False
                continue
            seconds = statistics.fmean(d["cpu_seconds"] for d in done)
            positions = statistics.fmean(d["positions"] for d in done)
            game_seconds += group["moves_per_game"] * seconds
            game_positions += group["moves_per_game"] * positions
            print(f"{tiles:>6} {group['moves_per_game']:>10.0f} "
                  f"{statistics.fmean(d['depth'] for d in done):>5.1f} {seconds:>8.3g} "
                  f"{positions:>11.3g}")
        if complete:
            print(f"  a depth-3 game's moves at {policy}: about {game_seconds / 60:.3g} "
                  f"CPU-minutes, {game_positions:.3g} positions")


if __name__ == "__main__":
    main()
