"""Do position objectives rank candidates as their games do? The validity study of position
sets (runs/RESULTS.md, "Position sets: a signal without games", stage 1), resumable.

Candidates, drawn from ``--seed`` before anything is measured: ``--local`` around a run's winner
(its normalised point plus a normal step of ``--sigma`` in every coordinate) and ``--spread``
uniform over the config's boxes. Each plays ``--games`` games at ``--depth`` on seeds ``--first``
on (the truth), and is scored by every objective on sets of positions from ``--set-games`` games
of ``--player``, labelled by ``--oracle`` at each of ``--oracle-depths``. Printed per set and
objective: Spearman's correlation with the truth over all candidates and the local ones; the
games' own split-half correlation; that of games at the objective's cost (its positions per
candidate, with the set's building cost shared by the candidates, as games at the candidates'
mean positions per game) against the other games; and a paired bootstrap over candidates of the
objective's correlation less the equal-cost games'. Kept in ``--out``: the sets, each
candidate's games (a file of its own, written as units finish: run again to go on) and the
figures (``validity.json``).

Run: ``python bench/positions_validity.py [--workers 2]`` (the plan's size: about 1.8
CPU-hours); ``--games 4 --set-games 2 --local 2 --spread 2`` is a toy.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BOOTSTRAP = 2000


def candidates(config_path: str, winner_path: str, local: int, spread: int, sigma: float,
               seed: int) -> list[dict[str, float]]:
    """The candidates' weights: ``local`` around the winner, then ``spread`` over the boxes."""
    from engine.weights_file import read_weights
    from tuner.config import load_config
    from tuner.space import SearchSpace

    space = SearchSpace(load_config(config_path).params)
    centre = space.point(read_weights(winner_path).weights)
    rng = np.random.default_rng([seed, 35])
    near = [np.clip(centre + sigma * rng.standard_normal(space.dimension), 0, 1)
            for _ in range(local)]
    far = [rng.random(space.dimension) for _ in range(spread)]
    return [space.weights(x) for x in near + far]


def spearman(a, b) -> float:
    """Spearman's rank correlation (no ties among means of real games)."""
    ranks_a = np.argsort(np.argsort(a))
    ranks_b = np.argsort(np.argsort(b))
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])


def paired_bootstrap(objective, equal_cost, truth, seed: int) -> tuple[float, float]:
    """The 95% interval of spearman(objective, truth) - spearman(equal_cost, truth), candidates
    resampled."""
    rng = np.random.default_rng(seed)
    count = len(truth)
    differences = []
    for _ in range(BOOTSTRAP):
        pick = rng.integers(0, count, count)
        if len(set(pick)) < 3:
            continue
        differences.append(spearman(objective[pick], truth[pick])
                           - spearman(equal_cost[pick], truth[pick]))
    low, high = np.percentile(differences, [2.5, 97.5])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "classic.yaml"))
    parser.add_argument("--winner", default=str(ROOT / "runs" / "classic-d1" / "best.yaml"))
    parser.add_argument("--player", default=str(ROOT / "runs" / "classic-d1" / "best.yaml"))
    parser.add_argument("--oracle", default=str(ROOT / "runs" / "classic-d2" / "best.yaml"))
    parser.add_argument("--oracle-depths", nargs="+", default=["3", "4"])
    parser.add_argument("--depth", type=int, default=1, help="the candidates' search")
    parser.add_argument("--local", type=int, default=20)
    parser.add_argument("--spread", type=int, default=20)
    parser.add_argument("--sigma", type=float, default=0.0165)
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--games", type=int, default=10_000, help="games per candidate")
    parser.add_argument("--first", type=int, default=3 * 10**9, help="the games' first seed")
    parser.add_argument("--set-games", type=int, default=80)
    parser.add_argument("--every", type=int, default=10)
    parser.add_argument("--workers", type=int, help="Ray's CPUs (default: all; 1: no Ray)")
    parser.add_argument("--out", default="outputs/positions-validity")
    args = parser.parse_args()

    from engine.depth import parse_depth
    from engine.positions.objectives import OBJECTIVES
    from engine.positions.sampling import PositionSampler
    from engine.solver import PlayerSpec, Solver
    from engine.weights_file import read_weights
    from tuner.analysis.positions import PositionBuild
    from tuner.cluster.ray_evaluator import evaluator_for
    from tuner.config import RaySection
    from tuner.games.evaluation import Job, tune2048_version
    from tuner.games.saved_games import SavedGames

    out = Path(args.out)
    (out / "games").mkdir(parents=True, exist_ok=True)
    weights = candidates(args.config, args.winner, args.local, args.spread, args.sigma,
                         args.seed)
    family = read_weights(args.winner).family
    specs = [PlayerSpec(family, w, args.depth) for w in weights]
    player, oracle = read_weights(args.player), read_weights(args.oracle)
    ray = RaySection.from_values("bench")
    if args.workers is not None:
        ray = ray.with_values({"ray.workers": args.workers}, {"ray.workers": "--workers"})
    seeds = tuple(range(args.first, args.first + args.games))
    saved = [SavedGames(out / "games" / f"candidate-{i:02d}.json", [spec], tune2048_version())
             for i, spec in enumerate(specs)]
    with evaluator_for(ray, [family], start_ray=False) as evaluator:
        sets = {}
        for depth in args.oracle_depths:
            sampler = PositionSampler(
                PlayerSpec(player.family, player.weights, args.depth),
                PlayerSpec(oracle.family, oracle.weights, parse_depth(depth)), args.every)
            path = out / f"set-oracle-{depth}.npz"
            sets[depth] = PositionBuild(path, sampler, args.seed, args.set_games).run(evaluator)
        jobs = [Job(i, spec, saved[i].missing(0, seeds)) for i, spec in enumerate(specs)]
        jobs = [job for job in jobs if job.seeds]
        try:
            if jobs:
                evaluator.play(jobs, None,
                               lambda j, games: saved[jobs[j].candidate].add(0, games))
        finally:
            for kept in saved:
                kept.flush()
    scores = np.array([[g.score for g in kept.results(0, seeds)] for kept in saved], float)
    positions_per_game = float(np.mean([[g.moves_evaluated for g in kept.results(0, seeds)]
                                        for kept in saved]))
    half = args.games // 2
    local = slice(0, args.local)
    figures = {"candidates": len(specs), "games": args.games,
               "split_half": spearman(scores[:, :half].mean(1), scores[:, half:].mean(1)),
               "split_half_local": spearman(scores[local, :half].mean(1),
                                            scores[local, half:].mean(1)),
               "positions_per_game": positions_per_game, "sets": {}}
    print(f"{len(specs)} candidates ({args.local} local), {args.games:,} games each at depth "
          f"{args.depth}; split-half Spearman {figures['split_half']:.3f} (local "
          f"{figures['split_half_local']:.3f}); {positions_per_game:,.0f} positions a game")
    print(f"{'oracle':>6} {'objective':<12} {'all':>6} {'local':>6} {'eq games':>8} "
          f"{'eq all':>6} {'obj - eq, 95% CI':>20}")
    for depth, positions in sets.items():
        building = positions.cost["player_positions"] + positions.cost["oracle_positions"]
        results = {}
        for name, objective in OBJECTIVES.items():
            scored = [objective.score(Solver(family, w, args.depth), positions) for w in weights]
            values = np.array([s.value for s in scored])
            cost = float(np.mean([s.evaluated for s in scored])) + building / len(specs)
            equal = max(1, min(math.ceil(cost / positions_per_game), args.games - 1))
            rest = scores[:, equal:].mean(1)
            equal_cost = scores[:, :equal].mean(1)
            low, high = paired_bootstrap(values, equal_cost, rest, args.seed)
            results[name] = {
                "all": spearman(values, rest), "local": spearman(values[local], rest[local]),
                "cost_positions": cost, "equal_games": equal,
                "equal_games_all": spearman(equal_cost, rest),
                "difference_ci95": [low, high],
                "values": values.tolist()}
            print(f"{depth:>6} {name:<12} {results[name]['all']:>6.3f} "
                  f"{results[name]['local']:>6.3f} {equal:>8,} "
                  f"{results[name]['equal_games_all']:>6.3f} {low:>+9.3f} to {high:+.3f}")
        figures["sets"][depth] = {"positions": positions.positions, "cost": positions.cost,
                                  "objectives": results}
    figures["means"] = scores.mean(1).tolist()
    (out / "validity.json").write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
