import io
import zipfile
from pathlib import Path

import numpy as np
import pytest

from engine.errors import BadInput
from engine.positions import set_file
from engine.positions.sampling import label_game
from engine.positions.set_file import (
    PositionSet,
    PositionSetError,
    read_positions,
    write_positions,
)
from engine.solver import Solver

SAMPLER = {"player": {"family": "classic"}, "oracle": {"family": "classic"}, "every": 5}


@pytest.fixture(scope="module")
def games():
    player, oracle = Solver("classic", depth=0), Solver("classic", depth=1)
    return [label_game(player, oracle, seed, 5) for seed in (21, 22, 23)]


@pytest.fixture
def written(tmp_path, games):
    path = tmp_path / "set.npz"
    write_positions(path, PositionSet.from_games(SAMPLER, 9, 4, "0.1.0", games))
    return path


def same_games(a, b) -> bool:
    return len(a) == len(b) and all(
        all(np.array_equal(getattr(x, name), getattr(y, name), equal_nan=True)
            for name in ("board", "move", "score_before", "values"))
        and (x.seed, x.score, x.max_tile, x.moves, x.player_positions, x.oracle_positions,
             x.player_cpu, x.oracle_cpu) == (y.seed, y.score, y.max_tile, y.moves,
                                             y.player_positions, y.oracle_positions,
                                             y.player_cpu, y.oracle_cpu)
        for x, y in zip(a, b))


def test_a_set_reads_back_as_it_was_written(written, games):
    found = read_positions(written)
    assert (found.sampler, found.seed, found.planned, found.tune2048) == (SAMPLER, 9, 4, "0.1.0")
    assert found.games == 3 and not found.complete  # 3 of the 4 planned
    assert found.positions == sum(len(game.board) for game in games)
    assert same_games(found.labelled_games(), games)


def test_outcomes_and_cost_follow_from_the_games(written, games):
    found = read_positions(written)
    first = games[0]
    rows = slice(0, len(first.board))
    assert np.array_equal(found.score_to_come[rows], first.score - first.score_before)
    assert set(found.final_max_tile[rows]) == {first.max_tile}
    assert found.cost == {
        "games": 3, "positions": found.positions,
        "player_positions": sum(g.player_positions for g in games),
        "oracle_positions": sum(g.oracle_positions for g in games),
        "player_cpu": pytest.approx(sum(g.player_cpu for g in games)),
        "oracle_cpu": pytest.approx(sum(g.oracle_cpu for g in games))}


def test_an_empty_set_reads_back(tmp_path):
    path = tmp_path / "empty.npz"
    write_positions(path, PositionSet.from_games(SAMPLER, 1, 2, "0.1.0", []))
    found = read_positions(path)
    assert (found.games, found.positions, found.labelled_games()) == (0, 0, [])
    assert found.arrays["values"].shape == (0, 4)


def rewritten(path, change) -> None:
    """The archive at ``path`` with ``change(arrays)`` applied to its arrays, header included."""
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    change(arrays)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    path.write_bytes(buffer.getvalue())


@pytest.mark.parametrize("change, problem", [
    (lambda a: a["values"].__setitem__((0, 0), 1.5), "damaged: its contents do not match"),
    (lambda a: a.__setitem__("game_score", a["game_score"] + 1), "damaged"),
    (lambda a: a.pop("move"), "not a position set file"),
    (lambda a: a.__setitem__("extra", np.zeros(1)), "not a position set file"),
    (lambda a: a.__setitem__("board", a["board"].astype(np.int64)), "board array is int64"),
    (lambda a: a.__setitem__("move", a["move"][:-1]), "per-position arrays differ"),
    (lambda a: a.__setitem__("header", np.frombuffer(b"{not json", np.uint8)),
     "not a position set file"),
])
def test_a_damaged_or_edited_set_is_refused_in_one_line(written, change, problem):
    rewritten(written, change)
    with pytest.raises(PositionSetError, match=problem) as refused:
        read_positions(written)
    assert "\n" not in str(refused.value) and str(written) in str(refused.value)
    assert isinstance(refused.value, BadInput)


def test_a_truncated_or_foreign_file_is_refused(written, tmp_path):
    written.write_bytes(written.read_bytes()[:200])
    with pytest.raises(PositionSetError, match="damaged"):
        read_positions(written)
    text = tmp_path / "weights.yaml"
    text.write_text("format: tune2048-weights\n")
    with pytest.raises(PositionSetError, match="not a position set file"):
        read_positions(text)
    with pytest.raises(PositionSetError, match="no such position set file"):
        read_positions(tmp_path / "missing.npz")
    archive = tmp_path / "other.npz"
    with zipfile.ZipFile(archive, "w") as other:
        other.writestr("readme.txt", "hello")
    with pytest.raises(PositionSetError, match="not a position set file"):
        read_positions(archive)


@pytest.mark.parametrize("name, value, problem", [
    ("RULES", "2048 5x5", "built for the rules '2048 5x5'"),
    ("FORMAT_VERSION", 2, "position set version 2; this tune2048 reads version 1"),
])
def test_a_set_of_other_rules_or_another_version_is_refused(tmp_path, games, monkeypatch, name,
                                                            value, problem):
    path = tmp_path / "other.npz"
    with monkeypatch.context() as patched:
        patched.setattr(set_file, name, value)
        write_positions(path, PositionSet.from_games(SAMPLER, 9, 3, "0.1.0", games))
    with pytest.raises(PositionSetError, match=problem):
        read_positions(path)



def test_a_version_1_set_keeps_loading():
    """tests/data/positions/classic-v1.npz, made by ``tune positions build --player
    classic-reference --depth 0 --oracle classic-reference --oracle-depth 1 --games 2 --every 5
    --seed 1``."""
    fixture = Path(__file__).resolve().parents[2] / "data" / "positions" / "classic-v1.npz"
    found = read_positions(fixture)
    assert (found.games, found.positions, found.planned, found.seed) == (2, 120, 2, 1)
    assert found.sampler["oracle"]["depth"] == 1 and found.sampler["every"] == 5
    oracle = Solver("classic", found.sampler["oracle"]["weights"], depth=1)
    for board, values in zip(found.arrays["board"][:5], found.arrays["values"][:5]):
        expected = oracle.move_values(int(board))
        assert [-1.0 if np.isnan(v) else v for v in values] == [
            -1.0 if expected[m] is None else expected[m] for m in sorted(expected)]
