"""nneonneo/2048-ai, the widely used C++ engine of the same design, built for the benchmarks that
compare against it: from a checkout named on the command line (never shipped here), optionally
with a classic weights file's constants dropped in as ``tune export --format c`` writes them (the
seven ``SCORE_`` definitions replaced, as docs/cli.md says) and a depth policy in place of its own
rule, ``max(3, distinct tiles - 2)`` chance layers a move.

A build that cannot be made (no compiler, not a checkout, a checkout whose lines this does not
find) is a reason, returned as a string, for the benchmark to print and skip on.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from engine.depth import ByBoard, DepthPolicy
from engine.export import CLASSIC_C_NAMES

SOURCE_FILES = ("2048.cpp", "2048.h", "config.h", "platdefs.h")
THEIR_RULE = "std::max(3, count_distinct_tiles(board) - 2)"
THEIR_CONSTANT = re.compile(r"^static const float (SCORE_[A-Z_]+) = [^;\n]*;[ \t]*\n", re.MULTILINE)


def their_depth(policy: DepthPolicy) -> str:
    """The C++ expression for ``policy`` in its search (``state.depth_limit``, chance layers, as
    our depth counts them); ``ValueError`` for a node budget, which its search has no way to
    keep."""
    if isinstance(policy, ByBoard):
        rule = f"std::max({policy.floor}, count_distinct_tiles(board) - {policy.offset})"
        return rule if policy.cap is None else f"std::min({policy.cap}, {rule})"
    if isinstance(policy, int):
        return str(policy)
    raise ValueError(f"{policy}: its search has no node budget; give a depth or auto")


def patched(text: str, constants: str | None = None, depth: DepthPolicy | None = None) -> str:
    """2048.cpp's ``text`` with ``constants`` (C definitions of the seven classic constants) in
    place of its own, and ``depth`` in place of its rule; ``ValueError`` if a line to replace is
    not found exactly once."""
    if constants is not None:
        found = THEIR_CONSTANT.findall(text)
        if sorted(found) != sorted(CLASSIC_C_NAMES.values()):
            raise ValueError(f"its heuristic's constants are not the seven expected: {found}")
        first = THEIR_CONSTANT.search(text).start()
        text = THEIR_CONSTANT.sub("", text)
        text = text[:first] + constants.rstrip("\n") + "\n" + text[first:]
    if depth is not None:
        if text.count(THEIR_RULE) != 1:
            raise ValueError(f"its depth rule, {THEIR_RULE}, is not found once")
        text = text.replace(THEIR_RULE, their_depth(depth))
    return text


def source_digest(source: Path) -> str:
    """A SHA-256 of the files a build reads from the checkout ``source``, as they stand there:
    two checkouts with the same digest build the same engine, wherever they lie."""
    digest = hashlib.sha256()
    for name in SOURCE_FILES:
        path = source / name
        digest.update(f"{name}\0".encode())
        digest.update(path.read_bytes() if path.is_file() else b"(none)")
        digest.update(b"\0")
    return f"sha256:{digest.hexdigest()}"


def build(source: Path, into: Path, constants: str | None = None,
          depth: DepthPolicy | None = None) -> Path | str:
    """Its shared library, built from the checkout ``source`` in ``into`` (see ``patched``); or
    why it cannot be."""
    compiler = shutil.which("g++") or shutil.which("c++")
    if compiler is None:
        return "no C++ compiler (g++ or c++) on PATH"
    if not (source / "2048.cpp").is_file():
        return f"{source}: not a checkout of nneonneo/2048-ai (no 2048.cpp)"
    into.mkdir(parents=True, exist_ok=True)
    for name in SOURCE_FILES:
        if (source / name).is_file():
            shutil.copy(source / name, into / name)
    try:
        program = patched((source / "2048.cpp").read_text(), constants, depth)
    except ValueError as err:
        return f"{source}: {err}"
    (into / "2048.cpp").write_text(program)
    library = into / "nneonneo2048.so"
    done = subprocess.run([compiler, "-O3", "-std=c++11", "-fPIC", "-shared", "-o", str(library),
                           str(into / "2048.cpp")], capture_output=True, text=True, check=False)
    if done.returncode:
        return f"the build failed: {done.stderr.strip().splitlines()[-1:]}"
    return library


def load(library: Path) -> ctypes.CDLL:
    """The built library, its tables initialised: ``find_best_move(board)`` is ready."""
    engine = ctypes.CDLL(str(library))
    engine.find_best_move.argtypes = [ctypes.c_uint64]
    engine.find_best_move.restype = ctypes.c_int
    engine.init_tables()
    return engine


@contextlib.contextmanager
def quiet_stdout():
    """Its engine prints every move it scores: sent to /dev/null while it decides."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), 1)
    try:
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
