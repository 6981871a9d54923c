"""One set of OpenBLAS kernels on every x86-64 machine, so that a run's history is the same on
each.

pycma's linear algebra (sampling, the covariance update, its eigendecomposition) runs on numpy's
OpenBLAS, which picks its kernels for the CPU when numpy loads: the AVX-512 kernels some machines
get round differently in the last bit from the AVX2 kernels others get. A last bit changes a
candidate's weights, a changed weight can flip a tie between two moves, and the run's history
then depends on the machine. Asking for the AVX2 kernels ("Haswell", which every x86-64 CPU of
the last decade runs) before numpy loads makes them agree. ``engine`` does it on import, before
anything of tune2048 loads numpy; a user's own ``OPENBLAS_CORETYPE`` is kept.

numpy's own loops dispatch on the CPU the same way: on a machine with AVX-512, ``exp`` and
``log`` (pycma's step-size update) run AVX-512 code whose results differ in the last bit from the
AVX2 code of other machines; seen on a Xeon with AVX-512, where a run's ``sigma`` differed from
an AVX2 machine's in its 16th digit. ``NPY_DISABLE_CPU_FEATURES`` switches those targets off, by
the names the installed numpy dispatches under (``X86_V4`` from numpy 2.4); a user's own setting
is kept.
"""

from __future__ import annotations

import os
import platform
import sys

KERNELS = "Haswell"
# numpy's dispatch targets above AVX2, as each numpy names them (naming one it does not dispatch
# is warned about): from the version given on, newest first
_OLDER_AVX512 = "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
AVX512_TARGETS = (((2, 4), "X86_V4 AVX512_ICL AVX512_SPR"),
                  ((2, 3), f"{_OLDER_AVX512} AVX512_SPR"),
                  ((0, 0), _OLDER_AVX512))


def pin_kernels() -> bool:
    """Ask OpenBLAS for ``KERNELS`` unless numpy is loaded already or the CPU cannot run them;
    whether OpenBLAS will use one set of kernels whatever the machine."""
    if "numpy" in sys.modules:
        return os.environ.get("OPENBLAS_CORETYPE") is not None
    if platform.machine().lower() not in ("x86_64", "amd64") or not _has_avx2():
        return False
    os.environ.setdefault("OPENBLAS_CORETYPE", KERNELS)
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", _avx512_targets())
    return True


def _avx512_targets() -> str:
    """The names the installed numpy dispatches its AVX-512 loops under (read from its
    metadata: numpy itself must not load yet)."""
    from importlib.metadata import PackageNotFoundError, version  # only where pinned (start-up)

    try:
        installed = tuple(int(part) for part in version("numpy").split(".")[:2])
    except (PackageNotFoundError, ValueError):
        installed = AVX512_TARGETS[0][0]
    return next(names for since, names in AVX512_TARGETS if installed >= since)


def _has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as cpuinfo:
            return any(line.startswith("flags") and " avx2" in line for line in cpuinfo)
    except OSError:  # not Linux: leave OpenBLAS to choose
        return False
