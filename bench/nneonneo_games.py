"""Tuned weights in nneonneo/2048-ai's own engine: paired games of its search with our rules.

What ``tune export --format c`` is for, measured where people run it. For each classic weights
file this builds nneonneo/2048-ai from a checkout (``--source``; never shipped here) with the
file's constants dropped in as docs/cli.md says, and its depth rule, ``max(3, distinct tiles -
2)``, replaced by ``--depth`` (a fixed depth, or ``auto`` with a floor, offset and cap;
``bench/nneonneo.py``). Every file then plays the same seeds: its engine chooses each move, our
rules apply it and spawn the next tile from the seed (game i plays seed SEED + i, as ``tune
compare`` does). Per file it prints the mean score with its 95% interval and the 8192, 16384 and
32768 rates; per file against the last one named, the paired difference with its 95% interval and
p-value.

Every finished game is written to ``--out`` (JSON) at once, so a stopped comparison goes on where
it was when run again with the same arguments, from any checkout of the same engine (it is known by
its source files' digest, not by where it lies); seeds are handed out in order, each to every file,
and only seeds that every file has played are reported.

Without a compiler or a source it says so and exits 0: it never runs in CI.

Run: ``python bench/nneonneo_games.py --source PATH/TO/2048-ai --depth 3 --games 200
runs/classic-d3/best.yaml classic-reference``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from nneonneo import build, load, source_digest

from engine.atomic import atomic_write
from engine.depth import parse_depth
from engine.export import c_source
from engine.stats import mean_ci
from engine.weights_file import read_weights
from tuner.analysis.compare import paired_difference

ROOT = Path(__file__).resolve().parents[1]
RATES = (8192, 16384, 32768)

_engines: list = []  # in each worker process: the built engines, one per weights file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("weights", nargs="+", help="classic weights files (or built-in names); "
                                                   "the last is the one the others are paired with")
    parser.add_argument("--source", type=Path, help="a checkout of nneonneo/2048-ai")
    parser.add_argument("--depth", default="3",
                        help="a fixed depth or auto[:floor=F,offset=O,cap=C] (default 3)")
    parser.add_argument("--games", type=int, default=200, help="games per file (default 200)")
    parser.add_argument("--seed", type=int, default=10**9,
                        help="game i plays seed SEED + i (default 1e9, as tune compare)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(),
                        help="games played at once (default: all cores)")
    parser.add_argument("--out", type=Path,
                        help="results (JSON; default bench/data/nneonneo_games_<depth>.json)")
    args = parser.parse_args()
    if args.source is None:
        print("skipped: no --source (a checkout of nneonneo/2048-ai)")
        return
    policy = parse_depth(args.depth)
    out = args.out or ROOT / "bench" / "data" / f"nneonneo_games_{str(policy).replace(':', '_')}.json"
    settings = {"engine": source_digest(args.source), "depth": str(policy), "seed": args.seed,
                "weights": args.weights}
    done = previous_games(out, settings)
    with tempfile.TemporaryDirectory() as build_dir:
        libraries = []
        for i, spec in enumerate(args.weights):
            constants = c_source(read_weights(spec), spec)
            library = build(args.source, Path(build_dir) / str(i), constants, policy)
            if isinstance(library, str):
                print(f"skipped: {library}")
                return
            libraries.append(str(library))
        play_all(libraries, settings, done, args, out)
    report(settings, done, args.games)


def previous_games(out: Path, settings: dict) -> dict[str, dict[str, dict]]:
    """The games ``out`` holds already, by file and seed; ``SystemExit`` if it holds another
    comparison (its games would not be these)."""
    if not out.exists():
        return {spec: {} for spec in settings["weights"]}
    held = json.loads(out.read_text())
    for key, value in settings.items():
        if held["settings"].get(key) != value:
            raise SystemExit(f"{out}: holds another comparison (its {key} is "
                             f"{held['settings'].get(key)}, not {value}); name another --out")
    return held["games"]


def play_all(libraries: list[str], settings: dict, done: dict, args, out: Path) -> None:
    """Play every (seed, file) not yet in ``done``, writing ``out`` after each game."""
    todo = [(i, args.seed + g) for g in range(args.games) for i in range(len(libraries))
            if str(args.seed + g) not in done[settings["weights"][i]]]
    if not todo:
        return
    print(f"playing {len(todo)} games on {args.jobs} processes")
    with ProcessPoolExecutor(args.jobs, initializer=_load, initargs=(libraries,)) as pool:
        futures = [pool.submit(_play, i, seed) for i, seed in todo]
        for future in as_completed(futures):
            i, seed, game = future.result()
            done[settings["weights"][i]][str(seed)] = game
            atomic_write(out, json.dumps({"settings": settings, "games": done}, indent=1) + "\n")


def _load(libraries: list[str]) -> None:
    """In a worker: load every engine, its output (every move it scores) sent to /dev/null."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    _engines.extend(load(Path(library)) for library in libraries)


def _play(i: int, seed: int) -> tuple[int, int, dict]:
    """One game: engine ``i`` chooses the moves, our rules apply them and spawn from ``seed``."""
    from engine.board import max_tile
    from engine.rules import SpawnStream, apply_move, legal_moves, new_game

    engine = _engines[i]
    stream = SpawnStream(seed)
    board = new_game(stream)
    score = moves = 0
    start = time.process_time()
    while legal_moves(board):
        move = engine.find_best_move(board)
        after, points = apply_move(board, move)
        if after == board:
            raise RuntimeError(f"its engine chose the illegal move {move} on {board:#018x}")
        score += points
        moves += 1
        board = stream.spawn(after)
    return i, seed, {"score": score, "max_tile": max_tile(board), "moves": moves,
                     "cpu_seconds": time.process_time() - start}


def report(settings: dict, done: dict, games: int) -> None:
    """Per file and per pair, on the seeds every file has played."""
    specs = settings["weights"]
    seeds = [s for s in map(str, range(settings["seed"], settings["seed"] + games))
             if all(s in done[spec] for spec in specs)]
    if not seeds:
        return
    print(f"nneonneo/2048-ai at depth {settings['depth']}, our rules, seeds {seeds[0]} to "
          f"{seeds[-1]} ({len(seeds)} games each; +/-: 95% interval)")
    print(f"{'weights':>34} {'mean':>9} {'+/-':>7} " + " ".join(f"{t:>6}" for t in RATES)
          + f" {'cpu s/game':>10}")
    scores = {}
    for spec in specs:
        played = [done[spec][s] for s in seeds]
        scores[spec] = [g["score"] for g in played]
        mean, ci = mean_ci(scores[spec])
        rates = " ".join(f"{sum(g['max_tile'] >= t for g in played) / len(played):>6.1%}"
                         for t in RATES)
        cpu = sum(g["cpu_seconds"] for g in played) / len(played)
        print(f"{spec:>34} {mean:>9,.0f} {ci:>7,.0f} {rates} {cpu:>10.2f}")
    if len(seeds) < 2:
        return
    baseline = specs[-1]
    for spec in specs[:-1]:
        pair = paired_difference(scores[spec], scores[baseline])
        print(f"{spec} - {baseline}: {pair['mean_difference']:+,.0f} +/- {pair['ci95']:,.0f} "
              f"(p = {pair['p_value']:.2g})")


if __name__ == "__main__":
    main()
