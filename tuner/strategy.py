"""Where tune2048 0.1 and 0.2 kept pycma's CMA-ES: their checkpoints pickled these classes by
this module's name, so it names them still (``tuner.strategies.pycma_es`` holds them)."""

from tuner.strategies.pycma_es import CMAES, SeededNormal

Strategy = CMAES  # the class's name in checkpoints written by tune2048 0.1.0

__all__ = ["CMAES", "SeededNormal", "Strategy"]
