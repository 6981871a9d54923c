"""The games a run keeps since its last checkpoint (``tuner.games.kept``): what a later sitting
finds is answered without playing, exactly as playing it would have; a line cut short, or a file
of other rules, keeps nothing and is played again."""

from __future__ import annotations

import json
import logging
from dataclasses import replace

from engine.solver import GameResult, PlayerSpec
from tuner.games.evaluation import Job, SerialEvaluator
from tuner.games.kept import HEADER, KeptGames
from tuner.games.schedule import AllGames
from tuner.store import checkpoint as ckpt
from tuner.store.store import MemoryStore

CLASSIC = {"lost_penalty": 200000.0, "monotonicity_power": 4.0, "monotonicity_weight": 47.0,
           "sum_power": 3.5, "sum_weight": 11.0, "merges_weight": 700.0, "empty_weight": 270.0}
JOBS = [Job(0, PlayerSpec("classic", CLASSIC, depth=1), (11, 12, 13, 14)),
        Job(1, PlayerSpec("classic", {**CLASSIC, "empty_weight": 500.0}, depth=1),
            (11, 12, 13, 14))]


def play(store: MemoryStore, jobs=JOBS, games_per_unit: int = 2):
    """The jobs' games through the store's kept games: the results, the kept games' object, and
    how many games the progress counted."""
    kept = KeptGames(store)
    counted = []
    schedule = kept.schedule(jobs, AllGames([job.seeds for job in jobs]), counted.append)
    results = SerialEvaluator(games_per_unit).run(jobs, schedule, counted.append)
    kept.flush()
    return results, kept, sum(counted)


def games(results) -> list[list[GameResult]]:
    """Results as what a game is (its CPU time aside, which differs from one play to the
    next)."""
    return [[replace(game, seconds=0.0) for game in job] for job in results]


def lines(store: MemoryStore) -> list[str]:
    return store.kept_games().splitlines()


def test_games_kept_by_one_sitting_are_answered_in_the_next_without_playing():
    store = MemoryStore()
    first, kept, counted = play(store)
    assert kept.answered == 0 and counted == 8
    assert json.loads(lines(store)[0]) == HEADER and len(lines(store)) == 1 + 4  # 4 units
    again, kept, counted = play(store)
    assert again == first  # their CPU time too: these are the games the first sitting played
    assert kept.answered == 8 and counted == 8  # the progress counts them all the same
    assert len(lines(store)) == 1 + 4  # nothing played, nothing appended


def test_a_checkpoint_empties_them_and_the_next_games_start_the_file_again():
    store = MemoryStore()
    play(store)
    store.save_state(ckpt.RunState(config={}))
    assert store.kept_games() == ""
    _, kept, _ = play(store)
    assert kept.answered == 0
    assert json.loads(lines(store)[0]) == HEADER


def test_a_unit_with_any_game_not_kept_is_played_whole_and_the_results_are_the_same():
    store = MemoryStore()
    first, _, _ = play(store)
    cut = "\n".join(lines(store)[:-1]) + "\n"  # job 1's last unit (seeds 13 and 14) not kept
    store.files[ckpt.KEPT_GAMES_FILE] = cut.encode()
    again, kept, _ = play(store, games_per_unit=4)  # each job one unit: job 1's is played
    assert games(again) == games(first)
    assert kept.answered == 4


def test_a_line_cut_short_by_a_killed_process_keeps_nothing_of_its_unit(caplog):
    store = MemoryStore()
    first, _, _ = play(store)
    text = store.kept_games()
    store.files[ckpt.KEPT_GAMES_FILE] = text[: len(text) - 40].encode()  # the last line cut
    with caplog.at_level(logging.INFO, logger="tuner.games.kept"):
        again, kept, _ = play(store)
    assert games(again) == games(first)
    assert kept.answered == 6
    assert "1 damaged line (a process killed while writing): their games are played again" in (
        caplog.text)
    assert "6 games kept from the last sitting" in caplog.text


def test_games_of_other_rules_are_played_again_and_the_file_started_afresh(caplog):
    store = MemoryStore()
    first, _, _ = play(store)
    other = {**HEADER, "rules": "2048 5x5"}
    store.files[ckpt.KEPT_GAMES_FILE] = "\n".join(
        [json.dumps(other), *lines(store)[1:]]).encode() + b"\n"
    with caplog.at_level(logging.WARNING, logger="tuner.games.kept"):
        again, kept, _ = play(store)
    assert games(again) == games(first) and kept.answered == 0
    assert "kept games of another format or other rules" in caplog.text
    assert json.loads(lines(store)[0]) == HEADER and len(lines(store)) == 1 + 4


def test_a_game_is_matched_by_what_decides_it_not_by_its_job():
    store = MemoryStore()
    play(store)
    swapped = [Job(0, JOBS[1].spec, JOBS[1].seeds), Job(1, JOBS[0].spec, JOBS[0].seeds)]
    other_depth = [Job(0, PlayerSpec("classic", CLASSIC, depth=0), (11, 12))]
    results, kept, _ = play(store, swapped)
    assert kept.answered == 8
    _, kept, _ = play(store, other_depth)
    assert kept.answered == 0
    assert results[0][0].seed == 11


def test_a_damaged_game_keeps_nothing_of_its_line():
    store = MemoryStore()
    first, _, _ = play(store)
    unit = json.loads(lines(store)[1])
    unit["games"][0]["max_tile"] = 3  # no tile is 3
    store.files[ckpt.KEPT_GAMES_FILE] = "\n".join(
        [lines(store)[0], json.dumps(unit), *lines(store)[2:]]).encode() + b"\n"
    again, kept, _ = play(store)
    assert games(again) == games(first) and kept.answered == 6
