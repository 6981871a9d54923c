"""A family's code reaches every node of a Ray cluster through runtime_env, and every node must
run the driver's tune2048 code."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import ODD_FAMILY_FILE_NAMES, TWIN

from engine.families import FAMILIES
from engine.families.registry import canonical_spec
from engine.solver import PlayerSpec
from tuner import installed
from tuner.cluster.ray_evaluator import RayEvaluator
from tuner.errors import EvaluationError
from tuner.games.evaluation import Job, SerialEvaluator

ROOT = Path(__file__).resolve().parents[3]
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


@pytest.mark.parametrize("edited", [False, True], ids=["the same code", "one line added"])
def test_nodes_play_the_drivers_code_wherever_it_lives_and_refuse_other_code(
        cluster, monkeypatch, tmp_path, edited):
    """The workers import a copy of tune2048 in another folder, as a node where the checkout is
    installed elsewhere would: they play the driver's games, or, with one line added to a module,
    refuse them in one line naming both codes."""
    copy = tmp_path / "elsewhere"
    for package in ("engine", "tuner"):
        shutil.copytree(ROOT / package, copy / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    if edited:
        board = copy / "engine" / "board.py"
        board.write_text(board.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    theirs = installed.digest_of([copy / "engine", copy / "tuner"])
    ship = RayEvaluator._ship
    monkeypatch.setattr(RayEvaluator, "_ship", lambda self, *args: {
        **ship(self, *args), "env_vars": {"PYTHONPATH": str(copy)}})  # first on their path
    jobs = [Job(0, PlayerSpec("classic", FAMILIES["classic"].defaults(), 0, 0.0), (1, 2, 3))]
    evaluator = RayEvaluator(address=cluster.address, policy=4)
    try:
        if not edited:
            [games] = evaluator.play(jobs)
            [here] = SerialEvaluator(1).play(jobs)
            assert [(g.score, g.final_board) for g in games] == \
                [(g.score, g.final_board) for g in here]
            return
        with pytest.raises(EvaluationError) as refused:
            evaluator.play(jobs)
    finally:
        evaluator.close()
    ours = installed.code()
    assert theirs != ours.digest
    assert str(refused.value) == (
        f"a Ray node ({ours.host}) runs tune2048 {ours.version} of code {theirs[:12]}, this "
        f"driver ({ours.host}) runs tune2048 {ours.version} of code {ours.digest[:12]}: "
        f"install the driver's code on every node ({ours.install})")
