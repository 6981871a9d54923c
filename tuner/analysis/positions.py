"""What ``tune positions build`` does: a position set's games played and labelled where games
are played (Ray's workers, or this process), the file written as units come back, so that a
build too long for a sitting goes on where it stopped.

The set's games are its seeds' (``tuner.games.seeds.position_seeds``), held in seed order
whatever order the workers finish in: the same sampler, seed and games give the same file on any
number of CPUs, in one sitting or several. The file is written atomically after the first unit,
then at most every 30 seconds (``tuner.periodic``) and at the end or an interrupt; until it holds
every game it is marked incomplete (``PositionSet.complete``), and building again with the same
settings adds only the games it lacks. A file built with other settings, or by another tune2048
version (whose games may differ), is refused before a game is played.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from engine.echo import echo
from engine.errors import BadInput
from engine.positions.sampling import LabelledGame, PositionSampler
from engine.positions.set_file import PositionSet, read_positions, write_positions
from tuner.games.evaluation import Evaluator, Job, tune2048_version
from tuner.games.seeds import position_seeds
from tuner.periodic import PeriodicWrite


def _difference(path: str, held, asked) -> tuple[str, object, object]:
    """The first place where ``held`` and ``asked`` differ, walking mappings: its key path and
    both values; an empty path where they are equal."""
    if isinstance(held, dict) and isinstance(asked, dict) and held.keys() == asked.keys():
        for key in held:
            found = _difference(f"{path}.{key}", held[key], asked[key])
            if found[0]:
                return found
        return "", None, None
    return ("", None, None) if held == asked else (path, held, asked)


class PositionBuild:
    """The set at ``path`` being built: the games it already holds, and those to play."""

    def __init__(self, path: str | os.PathLike, sampler: PositionSampler, seed: int,
                 games: int):
        self.path = path
        self.sampler = sampler
        self.seed = seed
        self.seeds = position_seeds(seed, games)
        self.version = tune2048_version()
        self.held: dict[int, LabelledGame] = {}
        if os.path.lexists(path):
            self._resume(read_positions(path))
        self.reused = len(self.held)

    def _resume(self, found: PositionSet) -> None:
        wanted = PositionSet.from_games(self.sampler.to_dict(), self.seed, len(self.seeds),
                                        self.version, [])
        for key in ("sampler", "seed", "planned", "tune2048"):
            where, held, asked = _difference(key, found.header()[key], wanted.header()[key])
            if where:
                raise BadInput(f"{self.path}: a position set built with another {key} ({where} "
                               f"{echo(held)}, not {echo(asked)}): name another output file")
        self.held = {game.seed: game for game in found.labelled_games()}

    @property
    def missing(self) -> tuple[int, ...]:
        return tuple(seed for seed in self.seeds if seed not in self.held)

    def position_set(self) -> PositionSet:
        """The games held so far, in seed order."""
        games = [self.held[seed] for seed in self.seeds if seed in self.held]
        return PositionSet.from_games(self.sampler.to_dict(), self.seed, len(self.seeds),
                                      self.version, games)

    def run(self, evaluator: Evaluator, progress: Callable[[int], None] | None = None
            ) -> PositionSet:
        """Play and label the missing games, writing the file as they come back; the whole set.
        On an interrupt the file holds every game that came back."""
        writes = PeriodicWrite(lambda: write_positions(self.path, self.position_set()))

        def keep(_job: int, games: list[LabelledGame]) -> None:
            self.held.update((game.seed, game) for game in games)
            writes.changed()

        try:
            if self.missing:
                evaluator.play([Job(0, self.sampler, self.missing)], progress, keep)
        finally:
            writes.flush()
        return self.position_set()
