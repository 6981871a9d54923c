"""The CPU-seconds present as nodes join and leave: the share's denominator."""

from __future__ import annotations

import pytest

from tuner.games.throughput import CpuTime, share


@pytest.mark.parametrize(("start", "end"), [(0.0, 10.0), (3.1, 7.7), (-5.0, 0.1), (1e6, 1e6 + 0.3)])
def test_cpus_that_never_change_give_their_count_times_the_seconds_exactly(start, end):
    """The figure of tune2048 before 0.4 (CPUs x wall time), bit for bit, so that a run on a
    cluster that never changed keeps its share; the count is held before the first reading."""
    present = CpuTime(16, 2.0)
    present.count(16, 4.0)  # counted again, unchanged
    assert present.between(start, end) == 16 * (end - start)


def test_a_node_that_leaves_then_one_that_joins_are_counted_for_the_time_they_were_there():
    present = CpuTime(2, 0.0)
    present.count(1, 2.0)  # a node of 1 CPU left
    present.count(3, 5.0)  # one of 2 joined
    assert present.cpus == 3
    assert present.between(0.0, 10.0) == 2 * 2 + 1 * 3 + 3 * 5
    assert present.between(3.0, 6.0) == 1 * 2 + 3 * 1
    assert present.between(6.0, 6.0) == 0.0


def test_games_that_kept_every_cpu_busy_while_a_node_left_take_all_its_time_not_more():
    # 2 CPUs busy for 4 s, then 1 for 6 s: 14 CPU-seconds of games in 10 s
    present = CpuTime(2, 0.0)
    present.count(1, 4.0)
    assert share(14.0, present.between(0.0, 10.0)) == 1.0
    assert share(14.0, present.cpus * 10.0) == 1.4  # CPUs counted at the end: over 100%
