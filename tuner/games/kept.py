"""The games a run finished since its last checkpoint, kept in its store (``games.jsonl``), so that
a run stopped in the middle of a generation or of its validation (Ctrl-C, a killed process, a
session's end, a lost head) does not play them again when it is resumed: a generation of depth-4
games can take longer than a sitting.

A game is a pure function of its rules, its player (what decides its games, as
``tuner.games.saved_games.player`` writes it) and its seed, and a resumed run asks for exactly
the games it would have asked for (its strategy's state is in the checkpoint), so a game found
here is the game the run would play: what the run writes does not depend on where it stopped.

The file is JSON lines: a first line naming the format, its version and the rules, then one line
a unit of games (``{"player": ..., "games": [...]}``), appended as units come back, at most every
30 seconds (``tuner.periodic``) and when the phase ends or fails. A file by other rules, or of
another format, keeps nothing; a damaged line (the last one, cut short by a killed process) keeps
nothing of its games. Either way those games are played again, and the log says so. Each
checkpoint empties the file (``RunStore.save_state``): its games are in the checkpoint.

A unit whose games are all kept is answered from the file; one holding any game not kept is
played whole (units are a few games at the depths where this matters).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from engine.external.player import EnginePlayer
from engine.rules import RULES
from engine.solver import GameResult, PlayerSpec
from tuner.games.saved_games import game_problem, player, players_problem
from tuner.games.schedule import Schedule, Unit
from tuner.periodic import PeriodicWrite

if TYPE_CHECKING:
    from tuner.games.evaluation import Job
    from tuner.games.policy import UnitSize

log = logging.getLogger(__name__)

MARKER = "tune2048-kept-games"
VERSION = 1
HEADER = {"format": MARKER, "version": VERSION, "rules": RULES}


class Keeper(Protocol):
    """Where the games are kept: a run's store (``tuner.store.store.RunStore``)."""

    def kept_games(self) -> str: ...

    def keep_games(self, text: str, start: bool = False) -> None: ...

    @property
    def kept_games_name(self) -> str: ...


def _key(spec: PlayerSpec | EnginePlayer) -> str:
    return json.dumps(player(spec), sort_keys=True)


class KeptGames:
    """The games ``store`` keeps for this run: those an earlier sitting left (read once, here),
    and each unit played from now on (``keep``)."""

    def __init__(self, store: Keeper):
        self.store = store
        self.games: dict[tuple[str, int], GameResult] = {}
        self.count = 0  # games read from the file, and kept since (before a checkpoint: all)
        self.answered = 0  # games answered from the file, and their CPU-seconds
        self.answered_seconds = 0.0
        self._lines: list[str] = []  # units to append
        self._unread = False  # the file is of another format or rules: started again
        self._writes = PeriodicWrite(self._write)
        self._read(store.kept_games())

    def _read(self, text: str) -> None:
        lines = text.splitlines()
        if not lines:
            return
        try:
            header = json.loads(lines[0])
        except ValueError:
            header = None
        if header != HEADER:
            log.warning("%s: kept games of another format or other rules (%s): they are played "
                        "again", self.store.kept_games_name, lines[0][:200])
            self._unread = True
            return
        damaged = 0
        for line in lines[1:]:
            unit = _unit(line)
            if unit is None:
                damaged += 1
                continue
            key, games = unit
            self.games.update(((key, game.seed), game) for game in games)
        self.count = len(self.games)
        if damaged:
            log.warning("%s: %d damaged line%s (a process killed while writing): their games "
                        "are played again", self.store.kept_games_name, damaged,
                        "" if damaged == 1 else "s")
        if self.games:
            log.info("%d game%s kept from the last sitting (%s): not played again",
                     len(self.games), "" if len(self.games) == 1 else "s",
                     self.store.kept_games_name)

    def held(self, spec: PlayerSpec | EnginePlayer, seeds: Sequence[int]
             ) -> list[GameResult] | None:
        """The kept games of ``spec`` on ``seeds``, in their order; None unless every one is."""
        key = _key(spec)
        found = [self.games.get((key, seed)) for seed in seeds]
        return None if None in found else found

    def keep(self, spec: PlayerSpec | EnginePlayer, results: Sequence[GameResult]) -> None:
        """A unit of ``spec``'s games came back: append it (when due)."""
        self._lines.append(json.dumps({"player": player(spec),
                                       "games": [game.to_dict() for game in results]}))
        self.count += len(results)
        self._writes.changed()

    def flush(self) -> None:
        """Append every unit kept since the last write."""
        self._writes.flush()

    def _write(self) -> None:
        # a checkpoint empties the file since the last write: then it starts with its header
        start = self._unread or not self.store.kept_games()
        header = [json.dumps(HEADER)] if start else []
        self.store.keep_games("".join(line + "\n" for line in [*header, *self._lines]),
                              start=start)
        self._lines = []
        self._unread = False

    def schedule(self, jobs: Sequence[Job], inner: Schedule,
                 found: Callable[[int], None] | None = None) -> KeptSchedule:
        """``inner``, its units answered from the kept games where they can be (``found`` is
        told how many games each answered), the others' games kept as they come back."""
        return KeptSchedule(self, jobs, inner, found)


def _unit(line: str) -> tuple[str, list[GameResult]] | None:
    """A line's player key and games; None where it is not a unit as ``keep`` writes it."""
    try:
        unit = json.loads(line)
    except ValueError:
        return None
    if not isinstance(unit, dict) or unit.keys() != {"player", "games"}:
        return None
    if players_problem([unit["player"]]) is not None or not isinstance(unit["games"], list):
        return None
    if any(game_problem(game) is not None for game in unit["games"]):
        return None
    return (json.dumps(unit["player"], sort_keys=True),
            [GameResult(**game) for game in unit["games"]])


class KeptSchedule:
    """A schedule (``tuner.games.schedule.Schedule``) whose units are answered from ``kept``
    where every game of one is kept, so that only the others reach the driver's pool."""

    def __init__(self, kept: KeptGames, jobs: Sequence[Job], inner: Schedule,
                 found: Callable[[int], None] | None):
        self.kept = kept
        self.jobs = jobs
        self.inner = inner
        self.found = found

    def next_units(self, idle: int, size: UnitSize) -> list[Unit]:
        to_play: list[Unit] = []
        while True:
            answered = False
            for unit in self.inner.next_units(max(0, idle - len(to_play)), size):
                held = self.kept.held(self.jobs[unit.job].spec, unit.seeds)
                if held is None:
                    to_play.append(unit)
                    continue
                answered = True
                self.kept.answered += len(held)
                self.kept.answered_seconds += sum(game.seconds for game in held)
                self.inner.record(unit, held)
                if self.found is not None:
                    self.found(len(held))
            if not answered or self.inner.done:
                return to_play

    def record(self, unit: Unit, results: list[GameResult]) -> None:
        self.kept.keep(self.jobs[unit.job].spec, results)
        self.inner.record(unit, results)

    @property
    def can_speculate(self) -> bool:
        return self.inner.can_speculate

    @property
    def done(self) -> bool:
        return self.inner.done

    def results(self) -> list[list[GameResult]]:
        return self.inner.results()
