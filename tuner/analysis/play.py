"""What ``tune play`` shows: a move's advice, a game drawn as it goes, and the summary of many
games (text or JSON). The command line is ``tuner.cli.play``'s.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

from engine.board import format_board
from engine.defaults import MILESTONES
from engine.depth import to_yaml
from engine.external.player import EnginePlayer
from engine.families import get_family
from engine.rules import Move
from engine.stats import counted, duration, interval

if TYPE_CHECKING:
    from engine.solver import PlayerSpec
    from engine.stats import Summary


def advise(spec: PlayerSpec, board: int) -> int:
    solver = spec.solver()
    values = solver.move_values(board)
    best = solver.best_move(board)
    print(format_board(board))
    print()
    for move in Move:
        value = values[move]
        if value is None:
            shown = "illegal"
        else:  # squashed values (below the floor) are tiny: show their significant digits
            shown = f"{value:,.1f}" if abs(value) >= 1 else f"{value:.6g}"
        marker = "  <- best" if move == best else ""
        print(f"{move!s:>6}: {shown}{marker}")
    if best is None:
        print("no legal move: the game is over")
    return 0


def watch(spec: PlayerSpec, seed: int, delay: float) -> int:
    solver = spec.solver()
    interactive = sys.stdout.isatty()

    def show(board: int, move, score: int) -> None:
        if interactive:
            print("\033[H\033[J", end="")
        print(f"score {score:,}   next move: {move}")
        print(format_board(board))
        print(flush=True)
        if delay > 0:
            time.sleep(delay)

    result = solver.play(seed, on_move=show)
    print(format_board(result.final_board))
    print(f"game over: score {result.score:,}, max tile {result.max_tile}, "
          f"{counted(result.moves, 'move')}")
    return 0


def summary_dict(spec: PlayerSpec | EnginePlayer, summary: Summary, wall: float) -> dict:
    player = ({"engine": spec.name} if isinstance(spec, EnginePlayer) else
              {"family": get_family(spec.family).name, "cutoff": spec.cutoff})
    return {
        **player,
        "depth": to_yaml(spec.depth),
        "games": summary.games,
        "mean": summary.mean,
        "median": summary.median,
        "ci95": summary.ci95,
        "reach": {str(t): share for t, share in summary.reach.items()},
        "max_tiles": {str(t): n for t, n in summary.max_tiles.items()},
        "mean_moves": summary.mean_moves,
        "moves_per_second": summary.moves_per_second,
        "wall_seconds": wall,
    }


def format_summary(spec: PlayerSpec | EnginePlayer, summary: Summary, wall: float) -> str:
    player = (spec.describe() if isinstance(spec, EnginePlayer) else
              f"{get_family(spec.family).name} at depth {spec.depth}, cutoff {spec.cutoff:g}")
    lines = [
        f"player        {player}",
        f"games         {summary.games:,}",
        f"mean score    {summary.mean:,.0f} {interval(summary.ci95, summary.games)}",
        f"median score  {summary.median:,.0f}",
        f"moves/second  {summary.moves_per_second:,.0f} per process, {duration(wall)} wall",
        "reached       "
        + "   ".join(f"{t}: {summary.reach[t]:.1%}" for t in MILESTONES),
        "max tile      "
        + "   ".join(f"{t}: {n:,}" for t, n in sorted(summary.max_tiles.items(), reverse=True)),
    ]
    return "\n".join(lines)
