"""Compile (or load from numba's cache) the engine's kernels for every built-in family and the
example families the suite plays: what the suite does once before its test processes start
(conftest's ``pytest_configure``), and what ``.ci/run`` does for its second environment, into
that one's own numba cache, while the first environment's suite compiles its own. A family file elsewhere (a test's copy) shares these kernels where its
terms have the same shape: only its own few functions compile.

Run from the checkout with it on the import path: ``PYTHONPATH=. python tests/compile_kernels.py``.
"""

from __future__ import annotations

from engine.families.specs import FAMILIES
from engine.solver import Solver

EXAMPLE_FAMILIES = ("examples/families/seed001.py:Seed001", "examples/families/seed003.py:Seed003")

if __name__ == "__main__":
    for spec in [*FAMILIES, *EXAMPLE_FAMILIES]:
        Solver(spec, depth=1)
