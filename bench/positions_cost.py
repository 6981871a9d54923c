"""Where a position set is cheaper than games, and by how much: one candidate's evaluation on a
set of positions against the 64 games a run's `fixed:64` plays it, at each search policy.

Per ``--policies`` entry ``P=O`` (the candidate's policy and the oracle's): ``--games`` games of
``--weights`` at ``P`` (seeds 1 on), a position taken with probability ``1 / --every`` and
labelled by the same weights at ``O``, then scored by each objective's compiled code as a fitness
scores a candidate. Measured per game (its positions evaluated and CPU-seconds) and per position
taken (the candidate's searches, the oracle's). Printed for a set of ``--set-size`` positions
taken one in ``--set-every`` (a `tune positions build` default): the candidate's own scoring,
and with the set's building (the oracle's labels and the player's games the positions come from)
shared by ``--share`` candidates (a run of configs/classic.yaml's size: 12 a generation for 50
generations), each over 64 games at ``P``, in positions evaluated (the same on any machine) and
in CPU-seconds (this machine's). ``regret`` and ``agreement`` cost the same searches, one a
position at ``P``; ``outcome_fit`` one heuristic call a position.

Every game's figures are written to ``--out`` as it finishes: run again to go on.
Run: ``python bench/positions_cost.py`` (about 6 CPU-minutes, most of it depth 4's games and
depth 6's labels).
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
GAMES = 64  # what fixed:64 plays a candidate
POLICIES = ["1=3", "2=4", "3=5", "4=6", "nodes:150000=5"]

_solvers: dict = {}  # in each worker process: a Solver per policy
_warm: set = set()  # and the (policy, objective) pairs already run once, untimed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--weights", default=str(ROOT / "runs" / "classic-d3" / "best.yaml"))
    parser.add_argument("--policies", nargs="+", default=POLICIES,
                        help="CANDIDATE=ORACLE policies (default: %(default)s)")
    parser.add_argument("--games", type=int, default=4, help="games per policy (default 4)")
    parser.add_argument("--every", type=int, default=40,
                        help="positions measured: one in this many (default 40)")
    parser.add_argument("--set-size", type=int, default=20_000)
    parser.add_argument("--set-every", type=int, default=10)
    parser.add_argument("--share", type=int, default=600,
                        help="candidates sharing the set's building (default 600)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--out", type=Path, default=Path("outputs") / "positions_cost.json")
    args = parser.parse_args()

    from engine.depth import parse_depth

    pairs = args.policies
    for pair in pairs:  # a bad policy stops here, before any game
        candidate, _, oracle = pair.partition("=")
        try:
            parse_depth(candidate)
            parse_depth(oracle)
        except ValueError as err:
            raise SystemExit(f"positions_cost.py: {pair}: {err}") from None
    held = json.loads(args.out.read_text()) if args.out.exists() else {}
    settings = {"weights": args.weights, "every": args.every}
    if held.get("settings", settings) != settings:
        raise SystemExit(f"{args.out}: holds figures for {held['settings']}; name another --out")
    held["settings"] = settings
    games = held.setdefault("games", {})
    tasks = [(pair, seed) for pair in pairs for seed in range(1, args.games + 1)
             if str(seed) not in games.get(pair, {})]
    if tasks:
        print(f"measuring {len(tasks)} games on {args.jobs} processes")
        with ProcessPoolExecutor(args.jobs) as pool:
            futures = [pool.submit(_measure, args.weights, pair, seed, args.every)
                       for pair, seed in tasks]
            for future in as_completed(futures):
                pair, seed, figures = future.result()
                games.setdefault(pair, {})[str(seed)] = figures
                write(args.out, held)
    report(games, pairs, args)


def write(path: Path, data: dict) -> None:
    from engine.atomic import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=1) + "\n")


def _measure(weights: str, pair: str, seed: int, every: int) -> tuple[str, int, dict]:
    """In a worker: one game at the pair's candidate policy, its positions taken and labelled,
    then scored by each objective as a fitness scores a candidate; what each part cost."""
    import numpy as np

    from engine import Solver
    from engine.positions.objectives import OBJECTIVES
    from engine.positions.sampling import label_game
    from engine.positions.set_file import PositionSet

    candidate_policy, oracle_policy = pair.split("=")
    solvers = []
    for policy in (candidate_policy, oracle_policy):
        if policy not in _solvers:
            _solvers[policy] = Solver.from_file(weights, depth=policy)
            _solvers[policy].decide(0x1002)  # compiled and loaded before any clock runs
        solvers.append(_solvers[policy])
    candidate, oracle = solvers
    game = label_game(candidate, oracle, seed, every)
    taken = PositionSet.from_games({}, seed, 1, "", [game])
    figures = {"moves": game.moves, "positions": game.player_positions,
               "cpu_seconds": game.player_cpu, "taken": len(game.board),
               "oracle_positions": game.oracle_positions, "oracle_cpu_seconds": game.oracle_cpu}
    for name, objective in OBJECTIVES.items():
        if (candidate_policy, name) not in _warm:  # its kernels compiled before the clock runs
            objective.per_game(candidate, taken, np.zeros(1, np.int64))
            _warm.add((candidate_policy, name))
        start = time.process_time()
        _rows, evaluated = objective.per_game(candidate, taken, np.zeros(1, np.int64))
        figures[f"{name}_positions"] = evaluated
        figures[f"{name}_cpu_seconds"] = time.process_time() - start
    return pair, seed, figures


def report(games: dict, pairs: list[str], args) -> None:
    """Per policy: a game's cost and a position's; then a set's evaluation over 64 games'."""
    print(f"{args.weights}: a set of {args.set_size:,} positions taken one in "
          f"{args.set_every}, its building shared by {args.share} candidates, against "
          f"{GAMES} games")
    print(f"{'policy':>14} {'oracle':>6} {'games':>5} {'moves':>6} {'game pos':>9} "
          f"{'game s':>7} {'search pos':>10} {'label pos':>9} {'label ms':>8} "
          f"{'own/64':>7} {'all/64':>7} {'cpu all/64':>10} {'fit/64':>7}")
    for pair in pairs:
        played = list(games.get(pair, {}).values())
        taken = sum(g["taken"] for g in played)
        if not taken:
            continue
        candidate, oracle = pair.split("=")
        mean = {key: statistics.fmean(g[key] for g in played)
                for key in ("moves", "positions", "cpu_seconds")}
        each = {key: sum(g[key] for g in played) / taken  # per position taken
                for key in ("regret_positions", "regret_cpu_seconds", "oracle_positions",
                            "oracle_cpu_seconds", "outcome_fit_positions")}
        set_games = args.set_size * args.set_every / mean["moves"]  # games it is taken from
        ratio = {}
        for unit in ("positions", "cpu_seconds"):
            own = args.set_size * each[f"regret_{unit}"]
            building = args.set_size * each[f"oracle_{unit}"] + set_games * mean[unit]
            ratio[unit] = (own / (GAMES * mean[unit]),
                           (own + building / args.share) / (GAMES * mean[unit]))
        fit = (args.set_size * each["outcome_fit_positions"]
               + set_games * mean["positions"] / args.share) / (GAMES * mean["positions"])
        print(f"{candidate:>14} {oracle:>6} {len(played):>5} {mean['moves']:>6,.0f} "
              f"{mean['positions']:>9.3g} {mean['cpu_seconds']:>7.3g} "
              f"{each['regret_positions']:>10.3g} {each['oracle_positions']:>9.3g} "
              f"{1000 * each['oracle_cpu_seconds']:>8.3g} {ratio['positions'][0]:>7.3f} "
              f"{ratio['positions'][1]:>7.3f} {ratio['cpu_seconds'][1]:>10.3f} {fit:>7.3f}")


if __name__ == "__main__":
    main()
