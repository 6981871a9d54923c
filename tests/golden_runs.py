"""The golden runs: every shipped config (and one variant per strategy), capped to a few
generations, run in this process at its own seed. They were written
before the tuner's redesign; ``tests/tuner/loop/test_golden.py`` replays each and compares
``history.csv``, ``validation.csv`` and ``best.yaml`` byte for byte.

Run this file only to add a config: it refuses to replace a golden run that exists, since those
files are what a refactoring must reproduce.

    python tests/golden_runs.py
"""

from __future__ import annotations

import contextlib
import copy
import shutil
from pathlib import Path

import yaml

from engine import yaml_text

REPO = Path(__file__).resolve().parents[1]
GOLDEN = REPO / "tests" / "data" / "golden"
GOLDEN_FILES = ("history.csv", "validation.csv", "best.yaml")
CAPS = {
    ("cmaes", "max_generations"): 3,
    ("cmaes", "max_games"): None,
    ("cmaes", "restarts"): 0,
    ("validation", "games"): 8,
    ("validation", "top_k"): 2,
    ("validation", "every"): 2,
}
RACE = {"min": 4, "max": 12, "batch": 4}
STRATEGY_VARIANTS = {  # each strategy once, from classic.yaml's start
    "racing": {"name": "racing"},
    "population": {"name": "population", "factor": 2},
}


def capped(raw: dict) -> dict:
    """A shipped config shrunk to seconds of depth-1 games (node budgets to 2,000 nodes)."""
    config = copy.deepcopy(raw)
    for (section, key), value in CAPS.items():
        config.setdefault(section, {})[key] = value
    evaluation = config.setdefault("evaluation", {})
    evaluation["games"] = RACE if isinstance(evaluation.get("games"), dict) else 6
    search = config.setdefault("search", {})
    depth = search.get("depth", 1)
    search["depth"] = min(depth, 1) if isinstance(depth, int) else {"nodes": 2000}
    config.setdefault("cmaes", {})["popsize"] = min(config["cmaes"].get("popsize") or 6, 6)
    config["run"] = {**config.get("run", {}), "output_dir": "outputs"}
    return config


def golden_configs() -> dict[str, dict]:
    """Every shipped config capped, by file stem, and each strategy on classic.yaml."""
    sources = sorted((REPO / "configs").glob("*.yaml")) + sorted(
        (REPO / "examples" / "families").glob("*.yaml"))
    configs = {}
    for path in sources:
        raw = yaml_text.load(path.read_text(encoding="utf-8"))
        if "family" not in raw:
            continue
        configs[path.stem] = capped(raw)
    classic = yaml_text.load((REPO / "configs" / "classic.yaml").read_text(encoding="utf-8"))
    for name, strategy in STRATEGY_VARIANTS.items():
        variant = capped(classic)
        variant["strategy"] = dict(strategy)
        if name == "racing":
            variant["evaluation"]["games"] = RACE
        variant["run"]["name"] = f"classic-{name}"
        configs[f"strategy-{name}"] = variant
    return configs


def play_golden(config: dict, workdir: Path, checkpoint: Path | None = None) -> dict[str, bytes]:
    """Run ``config`` to its end in ``workdir`` (replaced) on this process alone, or resume it
    from a copy of the run directory ``checkpoint``; the golden files' bytes."""
    from tuner.config import parse_config
    from tuner.games.evaluation import SerialEvaluator
    from tuner.loop.run import TuningRun
    from tuner.store import checkpoint as ckpt

    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    for family_file in (REPO / "examples" / "families").glob("*.py"):  # file families' specs
        shutil.copy(family_file, workdir)  # are relative to the config's folder
    path = workdir / "config.source.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    with contextlib.chdir(workdir):  # file families are named relative to where a run starts
        parsed = parse_config(config, source=path.name)
        if checkpoint is None:
            Path("run").mkdir()
            run = TuningRun.start(parsed, Path("run"), progress=False)
        else:
            shutil.copytree(checkpoint, "run")
            state = ckpt.load_state(Path("run"))
            run = TuningRun.resume(parsed, Path("run"), state, progress=False)
        with SerialEvaluator() as evaluator:
            run.run(evaluator)
        produced = {name: (run.run_dir / name).read_bytes() for name in GOLDEN_FILES}
    shutil.rmtree(workdir)
    return produced


def main() -> int:
    for name, config in golden_configs().items():
        target = GOLDEN / name
        if target.exists():
            print(f"{target}: kept (exists)")
            continue
        produced = play_golden(config, GOLDEN / f".{name}.tmp")
        target.mkdir()
        for file in GOLDEN_FILES:
            (target / file).write_bytes(produced[file])
        print(f"{target}: written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
