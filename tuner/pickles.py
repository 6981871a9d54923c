"""Reading the pickles tune2048 writes (checkpoints, and the strategy state inside them) under
today's module paths.

A pickle names each class by the module that held it when it was written. Checkpoints of
earlier versions name modules that have since moved (the tuner's sub-packages came in 0.3;
0.1 and 0.2 kept pycma's CMA-ES in ``tuner.strategy``), so every pickle tune2048 reads goes
through ``loads``, which looks a moved class up where it lives now. The table only grows: a
checkpoint written by any earlier version keeps loading.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

MOVED_MODULES = {  # the module a checkpoint names -> where its classes live now
    "tuner.budget": "tuner.games.budget",
    "tuner.checkpoint": "tuner.store.checkpoint",
    "tuner.fitness": "tuner.games.fitness",
    "tuner.strategy": "tuner.strategies.pycma_es",
}
RENAMED_CLASSES = {  # (module, name) as a checkpoint names it -> (module, name) now
    ("tuner.strategy", "Strategy"): ("tuner.strategies.pycma_es", "CMAES"),
    ("tuner.strategies.pycma_es", "WithGames"): ("tuner.strategies.pycma_es", "CMAESStrategy"),
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        module, name = RENAMED_CLASSES.get((module, name), (module, name))
        return super().find_class(MOVED_MODULES.get(module, module), name)


def loads(data: bytes) -> Any:
    """``pickle.loads`` that finds the classes of earlier versions where they live now."""
    return _Unpickler(io.BytesIO(data)).load()
