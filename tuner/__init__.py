"""The tuner: configs, strategies, evaluation, the run loop and its files. Its Python API, the
names a caller may rely on, is ``tuner.api`` (docs/api.md).

Importing it imports ``engine`` first, which pins OpenBLAS's kernels before numpy loads, so that
CMA-ES computes the same candidates on every machine (``engine.blas``)."""

import engine  # noqa: F401 - first, for engine.blas
