"""Shipped configs and shipped results: in a fresh clone every shipped config starts a run, and no
command deletes or rewrites a committed result.

Each command runs in a copy of the repository's configs, examples and runs, with the stand-in
Ray (``conftest.no_ray``): a run that gets as far as starting Ray has passed every check that a
committed file could meet.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import EXIT_RAY_GUARD, REPO_ROOT, run_tune

SHIPPED_CONFIGS = sorted(p.relative_to(REPO_ROOT).as_posix() for p in
                         [*REPO_ROOT.glob("configs/*.yaml"),
                          *REPO_ROOT.glob("examples/families/*.yaml")])
# Finished results carry no checkpoint; a campaign under way is committed with its checkpoint
# between sessions. A campaign that started in outputs/ and moved to runs/ keeps, in its
# config.yaml, where it started.
RUN_DIRS = sorted(p.parent.relative_to(REPO_ROOT).as_posix()
                  for p in REPO_ROOT.glob("runs/**/config.yaml"))
FINISHED_RUNS = [d for d in RUN_DIRS if not (REPO_ROOT / d / "checkpoint.pkl").exists()]
RUNS_UNDER_WAY = [d for d in RUN_DIRS if d not in FINISHED_RUNS]


def names_itself(run_dir: str) -> bool:
    """Whether the run's config.yaml names the directory the run is in."""
    run = yaml.safe_load((REPO_ROOT / run_dir / "config.yaml").read_text())["run"]
    return f"{run['output_dir']}/{run['name']}" == run_dir


FINISHED_IN_PLACE = [d for d in FINISHED_RUNS if names_itself(d)]
FINISHED_AND_MOVED = [d for d in FINISHED_RUNS if d not in FINISHED_IN_PLACE]
# A run of an external engine reads its config by starting the engine, which a fresh clone
# builds first: the C example with the system's C compiler; nneonneo/2048-ai's adapter from a
# checkout of it that TUNE2048_NNEONNEO_SOURCE names (its source is never part of the project)
COMPILER = shutil.which("cc")
NNEONNEO = os.environ.get("TUNE2048_NNEONNEO_SOURCE")
ENGINE_RUNS = [d for d in RUN_DIRS
               if "engine" in yaml.safe_load((REPO_ROOT / d / "config.yaml").read_text())]
NNEONNEO_RUNS = [d for d in ENGINE_RUNS if "nneonneo" in yaml.safe_load(
    (REPO_ROOT / d / "config.yaml").read_text())["engine"]["cwd"]]
UNBUILT = [d for d in ENGINE_RUNS if COMPILER is None
           or (d in NNEONNEO_RUNS and (NNEONNEO is None or shutil.which("c++") is None))]


# What a run's start prices it at is not what these tests ask (tests/tuner/analysis/
# test_price.py does): a run of ours starts at the rough game time of its depth, as one too deep
# to time does, and an external engine's times one game. Timing the games of some twenty starts
# took about 200 CPU-seconds, a whole game at depth 4 among them.
ROUGH_PRICE = """
import tuner.analysis.timing as _timing
_timing.LONGEST_MEASURED = 0.0
_timing.MEASURE_SECONDS = 0.0
"""


def started(args: list[str], clone: Path, no_ray: Path):
    """``tune ARGS`` in the clone, Ray the stand-in, the start priced without timing games."""
    return run_tune(args, clone, no_ray, preludes=(ROUGH_PRICE,))


def runs(run_dirs: list[str]) -> list:
    """``run_dirs`` as test parameters, an engine's skipped where it cannot be built."""
    no_engine = pytest.mark.skip(reason="its engine cannot be built here: no C "
                                         "compiler, or no checkout of nneonneo/2048-ai")
    return [pytest.param(d, marks=no_engine) if d in UNBUILT else d for d in run_dirs]


def fingerprint(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its SHA-256."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The parts of the repository that commands read and could write."""
    root = tmp_path_factory.mktemp("clone")
    for folder in ("configs", "examples", "runs"):
        shutil.copytree(REPO_ROOT / folder, root / folder)
    engines = root / "examples" / "engines"
    (engines / "c_engine").unlink(missing_ok=True)  # built here, as in a fresh clone
    if COMPILER is not None:  # the build command of its config's header
        subprocess.run([COMPILER, "-O2", "-o", str(engines / "c_engine"),
                        str(engines / "c_engine.c"), "-lm"], check=True)
    adapter = engines / "nneonneo" / "nneonneo-tune2048"
    adapter.unlink(missing_ok=True)
    if NNEONNEO is not None and shutil.which("c++") is not None:  # its config's build command
        subprocess.run([sys.executable, str(engines / "nneonneo" / "build.py"), "--source",
                        NNEONNEO, "--output", str(adapter)], check=True, capture_output=True)
    return root


def test_every_shipped_config_and_run_is_covered():
    assert "configs/snake.yaml" in SHIPPED_CONFIGS and len(SHIPPED_CONFIGS) >= 10
    assert {"runs/classic-d3", "runs/strategies-d3/classic-d3-fixed64"} <= set(FINISHED_IN_PLACE)
    assert {"runs/classic-nodes", "runs/classic-d4"} <= set(FINISHED_AND_MOVED)


@pytest.mark.slow
@pytest.mark.parametrize(("config", "options"), [
    *((config, ["--workers", "1"]) for config in SHIPPED_CONFIGS),
    pytest.param("examples/engines/c-engine-d2.yaml", ["--workers", "1"], marks=pytest.mark.skipif(
        COMPILER is None, reason="no C compiler (cc) to build examples/engines/c_engine.c")),
    # what --overwrite stages does not depend on the config: one is enough
    ("configs/classic-d3.yaml", ["--workers", "3", "--overwrite"]),
])
def test_a_shipped_config_starts_and_touches_no_shipped_result(clone, no_ray, config, options):
    before = fingerprint(clone / "runs")
    result = started(["run", config, *options], clone, no_ray)
    assert result.returncode == EXIT_RAY_GUARD, result.stderr
    assert fingerprint(clone / "runs") == before


def test_the_documented_short_form_starts_snake(clone, no_ray):
    before = fingerprint(clone / "runs")
    result = started(["--config", "configs/snake.yaml"], clone, no_ray)
    assert result.returncode == EXIT_RAY_GUARD, result.stderr
    assert fingerprint(clone / "runs") == before


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("run_dir", runs(FINISHED_IN_PLACE))
def test_replaying_a_shipped_runs_config_never_replaces_it(clone, no_ray, run_dir, overwrite):
    # A shipped run's config.yaml names its own directory: the run is refused, not restarted.
    before = fingerprint(clone / "runs")
    result = started(["run", f"{run_dir}/config.yaml", *overwrite], clone, no_ray)
    assert result.returncode == 2, result.stderr
    assert "results without a checkpoint, which tune never replaces" in result.stderr
    assert fingerprint(clone / "runs") == before


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("run_dir", runs(FINISHED_AND_MOVED))
def test_replaying_a_moved_runs_config_starts_where_it_began(clone, no_ray, run_dir, overwrite):
    # Its config.yaml names outputs/, where the campaign started: the replay starts there.
    before = fingerprint(clone / "runs")
    result = started(["run", f"{run_dir}/config.yaml", *overwrite], clone, no_ray)
    assert result.returncode == EXIT_RAY_GUARD, result.stderr
    assert fingerprint(clone / "runs") == before


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("run_dir", runs(RUNS_UNDER_WAY))
def test_replaying_a_committed_runs_config_leaves_runs_untouched(clone, no_ray, run_dir,
                                                                 overwrite):
    before = fingerprint(clone / "runs")
    result = started(["run", f"{run_dir}/config.yaml", *overwrite], clone, no_ray)
    assert result.returncode in (2, EXIT_RAY_GUARD), result.stderr
    assert fingerprint(clone / "runs") == before


@pytest.mark.subprocess
def test_report_on_a_shipped_run_writes_nothing_unless_asked(clone, tmp_path):
    before = fingerprint(clone / "runs")
    for run_dir in FINISHED_RUNS + RUNS_UNDER_WAY:  # history-only campaign seeds included
        if run_dir in UNBUILT:
            continue  # its config names an engine this machine cannot build
        result = run_tune(["report", run_dir], clone, None)
        assert result.returncode == 0, result.stderr
        assert "wrote" not in result.stdout
    assert fingerprint(clone / "runs") == before
    plot = tmp_path / "classic-d3.png"
    result = run_tune(["report", "runs/classic-d3", "--plot", str(plot)], clone, None)
    assert result.returncode == 0, result.stderr
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert fingerprint(clone / "runs") == before


@pytest.mark.subprocess
def test_a_plot_into_a_shipped_run_is_refused_and_the_advice_works(clone):
    before = fingerprint(clone / "runs")
    result = run_tune(["report", "runs/snake-d1", "--plot"], clone, None)
    assert result.returncode == 2, result.stderr
    [line] = result.stderr.splitlines()
    assert "runs/snake-d1 holds results without a checkpoint" in line
    assert fingerprint(clone / "runs") == before
    advice = line.rpartition("write the plot elsewhere: ")[2].split()
    assert advice[0] == "tune"
    followed = run_tune(advice[1:], clone, None)
    assert followed.returncode == 0, followed.stderr
    assert (clone / "convergence.png").read_bytes().startswith(b"\x89PNG")
    assert fingerprint(clone / "runs") == before
