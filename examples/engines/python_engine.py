"""A 2048 engine in plain Python that speaks tune2048's engine protocol, version 1
(docs/engine-protocol.md): a template for adding the protocol to your own engine, and the engine
the tests check.

Its heuristic weighs empty cells, neighbouring equal tiles (merges to come) and rows and columns
out of order (a monotonicity penalty), each weight a parameter. Its search is expectimax: depth 0
picks the move whose board the heuristic values most, depth d averages over the spawns of d
chance layers. Its spawns come from Python's ``random.Random(seed)``: a 2 or, with probability
0.1, a 4 on a uniformly chosen empty cell.

Try it by hand: ``python examples/engines/python_engine.py``, then type ``tune2048 1``, ``play
depth:0 7``, ``trace depth:0 7`` and ``quit``. Check it: ``tune engine check -- python
examples/engines/python_engine.py``.
"""

from __future__ import annotations

import itertools
import random
import sys

NAME = "python-example 1.0"
PARAMS = {  # name: (default, low, high)
    "empty_weight": (270.0, 0.0, 10000.0),
    "merges_weight": (700.0, 0.0, 10000.0),
    "monotonicity_weight": (47.0, 0.0, 1000.0),
}
MAX_DEPTH = 2
# Each move's four lines of cells (row-major, 0 at the top left), from the side tiles slide to
LINES = {
    "up": [[col + 4 * i for i in range(4)] for col in range(4)],
    "down": [[col + 4 * (3 - i) for i in range(4)] for col in range(4)],
    "left": [[4 * row + i for i in range(4)] for row in range(4)],
    "right": [[4 * row + 3 - i for i in range(4)] for row in range(4)],
}
ROWS_AND_COLUMNS = LINES["left"] + LINES["up"]


def slide(ranks: list[int]) -> tuple[list[int], int]:
    """A line's ranks (0 empty, r the tile 2**r) slid toward its start, equal neighbours merged
    once, and the points the merges earn."""
    tiles = [rank for rank in ranks if rank]
    out, points, i = [], 0, 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            out.append(tiles[i] + 1)
            points += 1 << (tiles[i] + 1)
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    return out + [0] * (4 - len(out)), points


def move(board: list[int], direction: str) -> tuple[list[int], int]:
    moved, points = list(board), 0
    for cells in LINES[direction]:
        line, earned = slide([board[cell] for cell in cells])
        points += earned
        for cell, rank in zip(cells, line):
            moved[cell] = rank
    return moved, points


def value(board: list[int], weights: dict[str, float], counted: list[int]) -> float:
    counted[0] += 1
    merges = disorder = 0
    for cells in ROWS_AND_COLUMNS:
        line = [board[cell] for cell in cells]
        merges += sum(1 for a, b in itertools.pairwise(line) if a and a == b)
        rises = sum(max(b - a, 0) for a, b in itertools.pairwise(line))
        falls = sum(max(a - b, 0) for a, b in itertools.pairwise(line))
        disorder += min(rises, falls)
    return (weights["empty_weight"] * board.count(0) + weights["merges_weight"] * merges
            - weights["monotonicity_weight"] * disorder)


def best_move(board, depth, weights, counted) -> str | None:
    best, best_value = None, float("-inf")
    for direction in LINES:
        moved, _ = move(board, direction)
        if moved != board:
            worth = expected(moved, depth, weights, counted)
            if worth > best_value:
                best, best_value = direction, worth
    return best


def expected(board, depth, weights, counted) -> float:
    if depth == 0:
        return value(board, weights, counted)
    empty = [cell for cell, rank in enumerate(board) if rank == 0]
    total = 0.0
    for cell in empty:
        for rank, chance in ((1, 0.9), (2, 0.1)):
            child = list(board)
            child[cell] = rank
            worths = [expected(moved, depth - 1, weights, counted)
                      for moved in (move(child, d)[0] for d in LINES) if moved != child]
            total += chance * (max(worths) if worths else value(child, weights, counted))
    return total / len(empty)


def spawn(board: list[int], rng: random.Random) -> tuple[int, int]:
    cell = rng.choice([cell for cell, rank in enumerate(board) if rank == 0])
    board[cell] = 1 if rng.random() < 0.9 else 2
    return cell, 1 << board[cell]


def play(seed: int, depth: int, weights: dict[str, float], say, trace: bool) -> None:
    """One game from an empty board: its transcript first if asked, then its result line."""
    rng = random.Random(seed)
    board, score, moves, counted = [0] * 16, 0, 0, [0]
    for _ in range(2):
        cell, tile = spawn(board, rng)
        if trace:
            say(f"spawn cell={cell} tile={tile}")
    while (direction := best_move(board, depth, weights, counted)) is not None:
        board, points = move(board, direction)
        score += points
        moves += 1
        if trace:
            say(f"move dir={direction} board={''.join(f'{rank:x}' for rank in board)}")
        cell, tile = spawn(board, rng)
        if trace:
            say(f"spawn cell={cell} tile={tile}")
    say(f"game seed={seed} score={score} tile={1 << max(board)} moves={moves} "
        f"positions={counted[0]}")


def main() -> int:
    def say(line: str) -> None:
        print(line, flush=True)

    if sys.stdin.readline().split()[:1] != ["tune2048"]:
        return 1
    say(f"name {NAME}")
    for name, (default, low, high) in PARAMS.items():
        say(f"param {name} float {default} {low} {high}")
    say(f"search depth 0 {MAX_DEPTH}")
    say("ready 1")
    weights = {name: default for name, (default, _, _) in PARAMS.items()}
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            return 0
        if words[0] == "set" and len(words) == 3:
            if words[1] not in PARAMS:
                say(f"error no parameter named {words[1]}")
                continue
            weights[words[1]] = float(words[2])
            say("ok")
        elif words[0] in ("play", "trace") and len(words) >= 3:
            kind, _, depth = words[1].partition(":")
            if kind != "depth" or not depth.isdigit() or int(depth) > MAX_DEPTH:
                say(f"error search {words[1]} not supported (depth:0 to depth:{MAX_DEPTH})")
                continue
            for seed in words[2:]:
                play(int(seed), int(depth), weights, say, trace=words[0] == "trace")
            say("done")
        else:
            say(f"error unknown request: {line.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
