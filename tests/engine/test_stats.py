"""engine.stats: summaries of batches of games, on hand-made results."""

import math

import pytest

from engine.solver import GameResult
from engine.stats import duration, interval, interval_cell, mean_ci, plus_minus, summarize


def game(score: int, max_tile: int, moves: int = 10, seconds: float = 1.0) -> GameResult:
    return GameResult(
        seed=0,
        score=score,
        max_tile=max_tile,
        moves=moves,
        seconds=seconds,
        moves_evaluated=0,
        final_board=0,
    )


def test_summary_of_four_games():
    results = [
        game(100, 1024, moves=10),
        game(200, 2048, moves=20),
        game(300, 4096, moves=30),
        game(1000, 2048, moves=40),
    ]
    summary = summarize(results)
    assert summary.games == 4
    assert summary.mean == 400
    assert summary.median == 250  # (200 + 300) / 2
    # deviations -300, -200, -100, 600: squares sum to 500000; sample variance 500000 / 3
    sd = math.sqrt(500000 / 3)
    assert summary.stdev == pytest.approx(sd, rel=1e-12)
    assert summary.ci95 == pytest.approx(1.96 * sd / math.sqrt(4), rel=1e-4)
    assert summary.stderr == pytest.approx(sd / 2, rel=1e-12)
    assert summary.reach == {2048: 0.75, 4096: 0.25, 8192: 0.0, 16384: 0.0, 32768: 0.0}
    assert summary.max_tiles == {1024: 1, 2048: 2, 4096: 1}
    assert list(summary.max_tiles) == [1024, 2048, 4096]  # sorted by tile
    assert summary.mean_moves == 25
    assert summary.moves_per_second == 100 / 4


def test_summary_of_an_odd_number_of_games():
    results = [game(s, t) for s, t in [(5000, 512), (70000, 4096), (300000, 16384)]]
    summary = summarize(results)
    assert summary.median == 70000
    assert summary.mean == pytest.approx(375000 / 3)
    assert summary.reach == {2048: 2 / 3, 4096: 2 / 3, 8192: 1 / 3, 16384: 1 / 3, 32768: 0.0}
    assert summary.max_tiles == {512: 1, 4096: 1, 16384: 1}


def test_summary_of_one_game_has_no_spread():
    summary = summarize([game(1234, 128, moves=7, seconds=0.5)])
    assert summary.mean == summary.median == 1234
    assert summary.stdev == 0.0
    assert summary.ci95 == 0.0
    assert summary.moves_per_second == 14
    assert summary.reach == {2048: 0.0, 4096: 0.0, 8192: 0.0, 16384: 0.0, 32768: 0.0}


def test_identical_scores_have_a_zero_interval():
    summary = summarize([game(500, 64)] * 5)
    assert summary.ci95 == 0.0
    assert summary.max_tiles == {64: 5}


def test_mean_ci():
    mean, half = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0
    # sample sd of 1..5 is sqrt(2.5)
    assert half == pytest.approx(1.96 * math.sqrt(2.5) / math.sqrt(5), rel=1e-4)
    assert mean_ci([7.0]) == (7.0, 0.0)


def test_an_empty_batch_is_an_error():
    with pytest.raises(ValueError):
        summarize([])


def test_plus_minus_only_where_an_interval_exists():
    assert plus_minus(3_528.4, 200) == "+/- 3,528"
    assert plus_minus(0.0132) == "+/- 0.0132"
    assert plus_minus(0.0, 1) == plus_minus(math.inf) == "(one game: no interval)"
    assert plus_minus(0.0, 40) == "(no spread in 40 games: no interval)"
    assert plus_minus(0.0) == "(no spread: no interval)"
    assert interval(1_115.6, 1000) == "+/- 1,116 (95% CI)"
    assert interval(0.0, 5) == "(no spread in 5 games: no interval)"
    assert [interval_cell(h) for h in (4_332.1, 0.0, math.inf)] == ["4,332", "-", "-"]


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (0.004, 0.35, 4.23, 59.4)] == [
        "0.004 s", "0.35 s", "4.2 s", "59 s"]
    assert [duration(s) for s in (59.6, 3725.2, 35_776.0)] == ["0:01:00", "1:02:05", "9:56:16"]
