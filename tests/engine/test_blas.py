"""OpenBLAS runs one set of kernels on every x86-64 machine, asked for before numpy loads, so
that CMA-ES computes the same candidates everywhere (``engine.blas``)."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from engine.blas import AVX512_TARGETS, KERNELS, _has_avx2

pytestmark = pytest.mark.subprocess  # each test asks a fresh Python

PROBE = "import os, sys; {first}; print(os.environ.get('OPENBLAS_CORETYPE'))"


def probe(first: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    done = subprocess.run([sys.executable, "-c", PROBE.format(first=first)], text=True,
                          capture_output=True, env={**environment, **env}, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64") or not _has_avx2(),
                    reason="the kernels are pinned on x86-64 machines with AVX2")
def test_importing_tune2048_pins_the_kernels_before_numpy_loads():
    assert probe("import tuner") == KERNELS
    assert probe("import engine.solver") == KERNELS
    assert probe("import tuner", OPENBLAS_CORETYPE="SkylakeX") == "SkylakeX"  # the user's kept
    assert probe("import numpy, tuner") == "None"  # too late: numpy chose already


def test_the_kernels_numpy_runs_are_the_pinned_ones_in_a_tune2048_process():
    done = subprocess.run(
        [sys.executable, "-c", "import tuner, numpy; numpy.show_config()"], text=True,
        capture_output=True, env={k: v for k, v in os.environ.items()
                                  if k != "OPENBLAS_CORETYPE"} | {"OPENBLAS_VERBOSE": "2"},
        check=True)
    if "openblas" not in done.stdout.lower():
        pytest.skip("numpy runs another BLAS here")
    if platform.machine().lower() in ("x86_64", "amd64") and _has_avx2():
        assert f"Core: {KERNELS}" in done.stdout + done.stderr


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64") or not _has_avx2(),
                    reason="numpy's loops are pinned on x86-64 machines with AVX2")
def test_numpys_avx512_loops_are_switched_off_before_numpy_loads():
    """numpy's own AVX-512 loops round differently from its AVX2 ones (a run's sigma differed in
    its last digit on an AVX-512 machine): tune2048 switches them off, without a warning."""
    code = ("import warnings; warnings.simplefilter('error'); import tuner, numpy, os; "
            "print(os.environ['NPY_DISABLE_CPU_FEATURES'])")
    environment = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    done = subprocess.run([sys.executable, "-W", "error", "-c", code], text=True,
                          capture_output=True, env=environment, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() in [names for _since, names in AVX512_TARGETS]
    kept = subprocess.run([sys.executable, "-c", code], text=True, capture_output=True,
                          env=environment | {"NPY_DISABLE_CPU_FEATURES": ""}, check=True)
    assert kept.stdout.strip() == ""  # the user's own setting is kept
