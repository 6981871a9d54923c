"""Build nneonneo/2048-ai as an engine tune2048 can tune: its source from your checkout (never
copied into tune2048), compiled with driver.cpp beside this file, which speaks tune2048's engine
protocol around that engine's own search.

One change is made to its 2048.cpp, in a build folder: its seven heuristic constants
(``static const float SCORE_... = ...;``) lose their ``const``, so that the protocol's ``set``
can change them. Nothing else of it changes.

Run: ``python examples/engines/nneonneo/build.py --source ../2048-ai`` (writes
``nneonneo-tune2048`` here; ``--output`` elsewhere), then ``tune engine check --search depth:1
-- ./nneonneo-tune2048``. Needs a C++ compiler (``c++``). Exit status 2, with one line, where the
checkout or the compiler is missing or the constants are not found as expected.
"""

from __future__ import annotations

import argparse
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE_FILES = ("2048.cpp", "2048.h", "config.h", "platdefs.h")
CONSTANTS = ("SCORE_LOST_PENALTY", "SCORE_MONOTONICITY_POWER", "SCORE_MONOTONICITY_WEIGHT",
             "SCORE_SUM_POWER", "SCORE_SUM_WEIGHT", "SCORE_MERGES_WEIGHT", "SCORE_EMPTY_WEIGHT")
CONSTANT = re.compile(r"^static const float (SCORE_[A-Z_]+) = ", re.MULTILINE)


def with_variable_constants(text: str) -> str:
    """2048.cpp's text with its seven constants made variables; ValueError where they are not
    found once each."""
    found = CONSTANT.findall(text)
    if sorted(found) != sorted(CONSTANTS):
        raise ValueError(f"its heuristic's constants are not the seven expected: found {found}")
    return CONSTANT.sub(r"static float \1 = ", text)


def build(source: Path, output: Path) -> None:
    """Raises ValueError (one line) for what cannot be built."""
    missing = [name for name in SOURCE_FILES if not (source / name).is_file()]
    if missing:
        raise ValueError(f"{source}: not a checkout of nneonneo/2048-ai (no {', '.join(missing)})")
    compiler = shutil.which("c++")
    if compiler is None:
        raise ValueError("no C++ compiler (c++) on this machine")
    with tempfile.TemporaryDirectory() as folder:
        for name in SOURCE_FILES:
            shutil.copyfile(source / name, Path(folder) / name)
        cpp = Path(folder) / "2048.cpp"
        cpp.write_text(with_variable_constants(cpp.read_text()))
        done = subprocess.run([compiler, "-O2", "-std=c++11", "-I", folder, "-o", str(output),
                               str(HERE / "driver.cpp")], check=False, capture_output=True,
                              text=True)
        if done.returncode != 0:
            first = (done.stderr.strip().splitlines() or ["no message"])[0]
            raise ValueError(f"the compiler failed: {first}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="a checkout of 2048-ai")
    parser.add_argument("--output", type=Path, default=Path("nneonneo-tune2048"),
                        help="the engine to write (default: ./nneonneo-tune2048)")
    args = parser.parse_args()
    try:
        build(args.source, args.output)
    except ValueError as err:
        print(f"build.py: {err}", file=sys.stderr)
        return 2
    command = str(args.output) if "/" in str(args.output) else f"./{args.output}"
    print(f"wrote {args.output}: check it with tune engine check --search depth:1 -- "
          f"{shlex.quote(command)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
