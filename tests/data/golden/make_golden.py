"""Write the golden runs: every shipped config (and one variant per strategy), capped to a few
generations, run in this process at its own seed; ``tests/tuner/loop/test_golden.py`` replays each
and compares ``history.csv``, ``validation.csv`` and ``best.yaml`` byte for byte.

Run it only to add a config: it refuses to replace a golden run that exists, since those files
are what a refactoring must reproduce.

    python tests/data/golden/make_golden.py
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_runs import GOLDEN_FILES, golden_configs, play_golden


def main() -> int:
    for name, config in golden_configs().items():
        target = HERE / name
        if target.exists():
            print(f"{target}: kept (exists)")
            continue
        produced = play_golden(config, HERE / f".{name}.tmp")
        target.mkdir()
        for file in GOLDEN_FILES:
            (target / file).write_bytes(produced[file])
        print(f"{target}: written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
