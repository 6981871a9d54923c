"""Families whose own code misbehaves, one way each, for the bad-input corpus (tests/data/bad).

Named on the command line or in a config as ``tests.data.families.misbehaving:CLASS`` (the corpus
runs ``tune`` with the repository on PYTHONPATH). Each is the ``Empty`` family below, a correct
one, with one thing broken.
"""

import sys

import numpy as np

from engine.families import Family, Heuristic, LineSum, Param, grid_lines, row_empty


class Empty(Family):
    name = "empty"
    summary = "empty cells, weighted"
    params = (Param("w", 1.0, 0.5, 2.0, "weight per empty cell"),
              Param("v", 1.0, 0.5, 2.0, "a second weight, so that configs can tune two"))

    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (float(weights[0] * weights[1]) * row_empty(),)),))

    def reference(self, ranks, weights):
        rows, cols = grid_lines(ranks)
        return float(weights[0] * weights[1]) * sum(line.count(0) for line in rows + cols)


class HeuristicRaises(Empty):
    def heuristic(self, weights):
        return {}["tables"]  # a bug: KeyError


class HeuristicExits(Empty):
    def heuristic(self, weights):
        sys.exit(3)


class HeuristicInterrupts(Empty):
    def heuristic(self, weights):
        raise KeyboardInterrupt


class HeuristicDividesByZero(Empty):
    def heuristic(self, weights):
        return 1 / 0


class ReferenceRaises(Empty):
    def reference(self, ranks, weights):
        return ranks[4][0]  # a bug: IndexError


class ReferenceExits(Empty):
    def reference(self, ranks, weights):
        sys.exit("reference gave up")


class ReferenceInterrupts(Empty):
    def reference(self, ranks, weights):
        raise KeyboardInterrupt


class InitRaises(Empty):
    def __init__(self):
        raise RuntimeError("no configuration found")


class ParamsRaise(Empty):
    @property
    def params(self):
        raise AttributeError("params are computed from a file that is not there")


class DuplicateParams(Empty):
    params = (Param("w", 1.0, 0.5, 2.0, "weight per empty cell"),
              Param("w", 2.0, 0.5, 4.0, "the same name again"))


class ParamsNotATuple(Empty):
    params = {"w": Param("w", 1.0, 0.5, 2.0, "weight per empty cell")}  # noqa: RUF012 - the fault


class ParamsOfTuples(Empty):
    params = (("w", 1.0, 0.5, 2.0, "weight per empty cell"),)


class ParamsOneParam(Empty):
    params = Param("w", 1.0, 0.5, 2.0, "weight per empty cell")


class DefaultNotANumber(Empty):
    params = (Param("w", "1.0", 0.5, 2.0, "weight per empty cell"),)


class ParamNameNotAnIdentifier(Empty):
    params = (Param("empty weight", 1.0, 0.5, 2.0, "weight per empty cell"),)


class HeuristicReturnsNone(Empty):
    def heuristic(self, weights):
        return None


class ObjectTable(Empty):
    def heuristic(self, weights):
        return Heuristic((LineSum("shared", (np.full(65536, "x", dtype=object),)),))


class ReferenceReturnsText(Empty):
    def reference(self, ranks, weights):
        return "0"
