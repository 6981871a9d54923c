"""``combined``: the classic line terms plus positional terms that say where the big tiles go.

``classic`` is symmetric: it scores every row and column with one table, so it rewards an ordered
board but not a particular corner, and a tuned classic heuristic plateaus (``runs/RESULTS.md``).
The design documents' positional heuristics (seed 000's and 002's snake, seed 004's gradient, the
corner bonus) say which corner; this family adds them to the classic value::

    classic(board)
      + snake_weight * sum_k snake_decay**k * v(cell_k)     (the snake path of ``snake``)
      + gradient_weight * sum G[row][col] * v(row, col)     (seed 004's corner matrix)
      + corner_weight * top rank, when the top tile sits at the top-left corner

where v is the tile value (0 for empty). With the three positional weights at 0 it is ``classic``
exactly, so a tuning run can start from tuned classic weights.
"""

from __future__ import annotations

import numpy as np

from engine.families.base import Family, Param, grid_lines, row_values
from engine.families.classic import CLASSIC, line_reference, line_table
from engine.families.features import GRADIENT
from engine.families.snake import path_index
from engine.heuristic import BoardTerm, Heuristic, LineSum

CLASSIC_PARAMS = len(CLASSIC.params)


class Combined(Family):
    name = "combined"
    summary = "classic line terms plus a snake path, a corner gradient and a corner bonus"
    params = CLASSIC.params + (
        Param("snake_weight", 0.0, 0.0, 1e3, "weight of the snake path sum of tile values"),
        Param("snake_decay", 0.25, 0.01, 1.0, "ratio between consecutive snake path weights"),
        Param("gradient_weight", 0.0, 0.0, 1e3, "weight of the corner-gradient matrix sum"),
        Param("corner_weight", 0.0, 0.0, 1e5, "bonus per rank of the top tile in the corner"),
    )

    def heuristic(self, weights: np.ndarray) -> Heuristic:
        line = line_table(weights[:CLASSIC_PARAMS])
        snake_w, decay, gradient_w, corner_w = (float(w) for w in weights[CLASSIC_PARAMS:])
        values = row_values()
        rows = []
        for r in range(4):
            cell_weights = [
                snake_w * decay ** path_index(r, c) + gradient_w * GRADIENT[r][c]
                for c in range(4)
            ]
            rows.append(line + values @ np.array(cell_weights))
        # every column uses the classic table: one array, stored once in the workspace
        return Heuristic((
            LineSum("per_line", tuple(rows) + (line,) * 4),
            BoardTerm("corner", corner_w),
        ))

    def reference(self, ranks: list[list[int]], weights: np.ndarray) -> float:
        classic = weights[:CLASSIC_PARAMS]
        snake_w, decay, gradient_w, corner_w = (float(w) for w in weights[CLASSIC_PARAMS:])
        rows, cols = grid_lines(ranks)
        total = sum(line_reference(line, classic) for line in rows + cols)
        for r in range(4):
            for c in range(4):
                value = 2.0 ** ranks[r][c] if ranks[r][c] else 0.0
                total += snake_w * decay ** path_index(r, c) * value
                total += gradient_w * GRADIENT[r][c] * value
        top = max(max(row) for row in ranks)
        if ranks[0][0] == top:
            total += corner_w * top
        return total


COMBINED = Combined()
