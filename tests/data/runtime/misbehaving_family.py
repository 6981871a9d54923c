"""A family whose own code misbehaves where a player is built for games, and nowhere else.

classic's heuristic, except that while a unit of games builds its player (under
``tuner.games.evaluation.play_unit``, on a Ray worker or in the driver) it raises what
``MISBEHAVE`` says: ``exception`` (a ValueError), ``exit`` (``sys.exit(3)``) or ``interrupt``
(``KeyboardInterrupt``). Checking a config or a weights file calls the same method outside
``play_unit``, so the family passes every check first, as a real bug would. With
``MISBEHAVE_AFTER`` naming a file, it misbehaves only once that file exists (a run's
``checkpoint.pkl``: from the second generation on).
"""

import os
import sys
from pathlib import Path

from engine.families.classic import Classic


def _building_a_player() -> bool:
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "play_unit":
            return True
        frame = frame.f_back
    return False


class Misbehaving(Classic):
    def heuristic(self, weights):
        after = os.environ.get("MISBEHAVE_AFTER")
        if _building_a_player() and (after is None or Path(after).exists()):
            kind = os.environ.get("MISBEHAVE", "exception")
            if kind == "exit":
                sys.exit(3)  # MISBEHAVE_LINE exit
            if kind == "interrupt":
                raise KeyboardInterrupt  # MISBEHAVE_LINE interrupt
            raise ValueError("a bug in the family's own code")  # MISBEHAVE_LINE exception
        return super().heuristic(weights)
