import numpy as np
import pytest

from engine.errors import BadInput
from engine.families import get_family
from engine.positions.sampling import PositionSampler
from engine.positions.set_file import read_positions
from engine.solver import PlayerSpec
from tuner.analysis.positions import PositionBuild
from tuner.games.evaluation import SerialEvaluator
from tuner.games.seeds import position_seeds, validation_seeds

CLASSIC = get_family("classic").defaults()
SAMPLER = PositionSampler(PlayerSpec("classic", CLASSIC, 0), PlayerSpec("classic", CLASSIC, 1), 6)
GAMES = 7


def same_file(a, b) -> bool:
    first, second = read_positions(a), read_positions(b)
    return first.header() == second.header() and all(
        np.array_equal(first.arrays[name], second.arrays[name], equal_nan=True)
        for name in first.arrays if not name.endswith("_cpu"))  # CPU seconds are measured


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    path = tmp_path_factory.mktemp("whole") / "set.npz"
    PositionBuild(path, SAMPLER, 3, GAMES).run(SerialEvaluator(2))
    return path


def test_a_set_holds_its_seeds_games_in_seed_order_and_is_complete(whole):
    found = read_positions(whole)
    assert found.complete and found.games == GAMES
    assert [int(s) for s in found.arrays["seeds"]] == position_seeds(3, GAMES)
    assert found.sampler == SAMPLER.to_dict() and found.seed == 3


def test_position_seeds_are_never_validation_or_default_comparison_seeds():
    seeds = position_seeds(3, 1000)
    assert all(1 << 62 <= seed < 1 << 63 for seed in seeds)  # top bit clear, the next set
    assert not set(seeds) & set(validation_seeds(3, 1000))
    assert position_seeds(3, 10) == seeds[:10] and position_seeds(4, 10) != seeds[:10]


class Interrupted(SerialEvaluator):
    """Plays units of one game, and is interrupted after ``after`` of them."""

    def __init__(self, after: int):
        super().__init__(1)
        self.after = after

    def play(self, jobs, progress=None, on_results=None):
        done = [0]

        def count(games: int) -> None:
            done[0] += 1
            if done[0] == self.after:
                raise KeyboardInterrupt

        return super().play(jobs, count, on_results)


def test_an_interrupted_build_keeps_its_games_and_goes_on_to_the_same_file(tmp_path, whole):
    path = tmp_path / "set.npz"
    with pytest.raises(KeyboardInterrupt):
        PositionBuild(path, SAMPLER, 3, GAMES).run(Interrupted(after=3))
    kept = read_positions(path)
    assert kept.games == 3 and not kept.complete
    again = PositionBuild(path, SAMPLER, 3, GAMES)
    assert again.reused == 3 and len(again.missing) == GAMES - 3
    again.run(SerialEvaluator(4))
    assert same_file(path, whole)


class Reversed(SerialEvaluator):
    """Hands each unit's games back in the reverse order of the units: as workers finishing
    out of order would."""

    def play(self, jobs, progress=None, on_results=None):
        units = []
        results = super().play(jobs, progress, lambda job, games: units.append((job, games)))
        for job, games in reversed(units):
            on_results(job, games)
        return results


def test_the_order_units_finish_in_changes_nothing(tmp_path, whole):
    path = tmp_path / "set.npz"
    PositionBuild(path, SAMPLER, 3, GAMES).run(Reversed(1))
    assert same_file(path, whole)


@pytest.mark.parametrize("other, differs", [
    ({"sampler": PositionSampler(SAMPLER.player, SAMPLER.oracle, 5)}, "sampler"),
    ({"seed": 4}, "seed"),
    ({"games": GAMES + 1}, "planned"),
])
def test_a_set_built_with_other_settings_is_refused_before_a_game(tmp_path, whole, other,
                                                                  differs):
    settings = {"sampler": SAMPLER, "seed": 3, "games": GAMES} | other
    with pytest.raises(BadInput, match=f"built with another {differs}"):
        PositionBuild(whole, **settings)


def test_a_complete_set_is_not_built_again(whole):
    before = whole.read_bytes()
    build = PositionBuild(whole, SAMPLER, 3, GAMES)
    assert build.missing == ()
    build.run(Interrupted(after=1))  # would be interrupted by a unit: none is played
    assert whole.read_bytes() == before
