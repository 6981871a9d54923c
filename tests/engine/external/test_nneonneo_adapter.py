"""The adapter that makes nneonneo/2048-ai an engine tune2048 tunes (examples/engines/nneonneo):
its one change to that engine's source, its one-line refusals, and, where a checkout is named by
TUNE2048_NNEONNEO_SOURCE (its source is never part of this project), the built engine passing
every conformance check."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_docs import NNEONNEO_LINES as THEIR_LINES  # the lines of its 2048.cpp that builds change

from engine.external import Search
from engine.external.conformance import Check, check_engine

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "examples" / "engines" / "nneonneo" / "build.py"
CHECKOUT = os.environ.get("TUNE2048_NNEONNEO_SOURCE")


def load_build():
    spec = importlib.util.spec_from_file_location("nneonneo_build_script", BUILD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_seven_constants_become_variables_and_nothing_else_changes():
    build = load_build()
    text = build.with_variable_constants(THEIR_LINES)
    assert text.count("static float SCORE_") == 7 and "static const float SCORE_" not in text
    assert text.replace("static float SCORE_", "static const float SCORE_") == THEIR_LINES
    with pytest.raises(ValueError, match="not the seven expected"):
        build.with_variable_constants(THEIR_LINES.replace("SCORE_SUM_POWER", "SUM_POWER"))


@pytest.mark.subprocess
def test_a_folder_that_is_not_a_checkout_is_one_line_and_exit_2(tmp_path):
    done = subprocess.run([sys.executable, str(BUILD), "--source", str(tmp_path), "--output",
                           str(tmp_path / "engine")], check=False, capture_output=True,
                          text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"build.py: {tmp_path}: not a checkout of nneonneo/2048-ai (no "
                           "2048.cpp, 2048.h, config.h, platdefs.h)\n")
    assert not (tmp_path / "engine").exists()


@pytest.mark.skipif(CHECKOUT is None or shutil.which("c++") is None,
                    reason="TUNE2048_NNEONNEO_SOURCE names no checkout of nneonneo/2048-ai, or "
                           "there is no C++ compiler")
@pytest.mark.subprocess
def test_nneonneos_engine_built_by_the_adapter_passes_every_check(tmp_path):
    engine = tmp_path / "nneonneo-tune2048"
    subprocess.run([sys.executable, str(BUILD), "--source", CHECKOUT, "--output", str(engine)],
                   check=True, capture_output=True)
    found = [check for check in check_engine([str(engine)], games=6,
                                             searches=[Search("depth", 1)])
             if isinstance(check, Check)]
    assert len(found) == 8 and all(check.passed for check in found), found
