"""One set of OpenBLAS kernels on every x86-64 machine, so that a run's history is the same on
each.

pycma's linear algebra (sampling, the covariance update, its eigendecomposition) runs on numpy's
OpenBLAS, which picks its kernels for the CPU when numpy loads: the AVX-512 kernels some machines
get round differently in the last bit from the AVX2 kernels others get. A last bit changes a
candidate's weights, a changed weight can flip a tie between two moves, and the run's history
then depends on the machine. Asking for the AVX2 kernels ("Haswell", which every x86-64 CPU of
the last decade runs) before numpy loads makes them agree. ``engine`` does it on import, before
anything of tune2048 loads numpy; a user's own ``OPENBLAS_CORETYPE`` is kept.
"""

from __future__ import annotations

import os
import platform
import sys

KERNELS = "Haswell"


def pin_kernels() -> bool:
    """Ask OpenBLAS for ``KERNELS`` unless numpy is loaded already or the CPU cannot run them;
    whether OpenBLAS will use one set of kernels whatever the machine."""
    if "numpy" in sys.modules:
        return os.environ.get("OPENBLAS_CORETYPE") is not None
    if platform.machine().lower() not in ("x86_64", "amd64") or not _has_avx2():
        return False
    os.environ.setdefault("OPENBLAS_CORETYPE", KERNELS)
    return True


def _has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            return any(line.startswith("flags") and " avx2" in line for line in cpuinfo)
    except OSError:  # not Linux: leave OpenBLAS to choose
        return False
