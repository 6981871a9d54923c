"""A family's code reaches every node of a Ray cluster through runtime_env, and every node must
run the driver's tune2048 version."""

from __future__ import annotations

import shutil

import pytest
from conftest import ODD_FAMILY_FILE_NAMES, TWIN

from engine.families import FAMILIES
from engine.families.registry import canonical_spec
from engine.solver import PlayerSpec
from tuner.cluster import ray_evaluator
from tuner.cluster.ray_evaluator import RayEvaluator
from tuner.errors import EvaluationError
from tuner.games.evaluation import Job, SerialEvaluator

FAMILY = TWIN.format(cls="Shipped", name="shipped", param="empty")


def test_a_family_file_in_a_temporary_directory_reaches_every_worker(cluster, tmp_path):
    home = tmp_path / "only-here"
    home.mkdir()
    (home / "shipped_family_test.py").write_text(FAMILY, encoding="utf-8")
    (home / "__pycache__").mkdir()  # caches stay home
    spec = canonical_spec(f"{home / 'shipped_family_test.py'}:Shipped")
    jobs = [Job(i, PlayerSpec(spec, {"empty": w}, 0, 0.0), tuple(range(10, 18)))
            for i, w in enumerate((2.0, 0.5))]
    expected = SerialEvaluator(2).play(jobs)
    evaluator = RayEvaluator(address=cluster.address, policy=2, families=[spec])
    try:
        shutil.rmtree(home)  # from now on, the code exists only where Ray put it
        on_ray = evaluator.play(jobs)
    finally:
        evaluator.close()
    assert [[(g.seed, g.score, g.final_board) for g in games] for games in on_ray] == \
        [[(g.seed, g.score, g.final_board) for g in games] for games in expected]


def test_family_files_of_any_name_play_on_ray(cluster, tmp_path, monkeypatch):
    """Files in the driver's working directory named like modules every worker imports
    (``json.py``, ``engine.py``, ``ray.py``) or like no module at all (``my-family.py``,
    ``my.family.py``, ``__init__.py``...), and two files named ``fam.py`` in two folders, one
    seeking empty cells and one avoiding them: each is shipped as the module of a package of its
    own, and the driver's working directory stays off the workers' import path, so every worker
    plays the right code."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)  # Ray used to put it first on every worker's import path
    files = [(here / name, 1.0) for name in ODD_FAMILY_FILE_NAMES]
    files += [(tmp_path / "b" / "fam.py", 1.0), (tmp_path / "c" / "fam.py", -1.0)]
    specs = []
    for path, sign in files:
        path.parent.mkdir(exist_ok=True)
        code = (FAMILY.replace("weights[0] * row_empty()", f"{sign} * weights[0] * row_empty()")
                .replace("float(weights[0]) * sum", f"{sign} * float(weights[0]) * sum"))
        path.write_text(code, encoding="utf-8")
        specs.append(canonical_spec(f"{path}:Shipped"))
    jobs = [Job(i, PlayerSpec(spec, {"empty": 1.0}, 0, 0.0), tuple(range(20, 24)))
            for i, spec in enumerate(specs)]
    expected = SerialEvaluator(2).play(jobs)
    evaluator = RayEvaluator(address=cluster.address, policy=2, families=specs)
    try:
        on_ray = evaluator.play(jobs)
    finally:
        evaluator.close()
    played = [[(g.seed, g.score, g.final_board) for g in games] for games in on_ray]
    assert played == [[(g.seed, g.score, g.final_board) for g in games] for games in expected]
    assert played[-2] != played[-1]  # the two fam.py files played their own code


def test_a_node_of_another_tune2048_version_is_refused(cluster, monkeypatch):
    evaluator = RayEvaluator(address=cluster.address, policy=4)
    monkeypatch.setattr(ray_evaluator, "tune2048_version", lambda: "0.0.0-elsewhere")  # the driver
    jobs = [Job(0, PlayerSpec("classic", FAMILIES["classic"].defaults(), 0, 0.0), (1, 2, 3))]
    try:
        with pytest.raises(EvaluationError, match=r"runs tune2048 \S+, this driver "
                                                  r"0\.0\.0-elsewhere: install the same version "
                                                  "on every node"):
            evaluator.play(jobs)
    finally:
        evaluator.close()
