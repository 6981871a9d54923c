"""engine.external.protocol: each line of the engine protocol read strictly, and refused in a
message that quotes it."""

from __future__ import annotations

import itertools

import pytest

from engine.external.protocol import (
    MAX_LINE,
    GameResult,
    Moved,
    Param,
    ProtocolError,
    Search,
    Spawn,
    play_requests,
    read_declaration,
    read_game,
    read_step,
    set_request,
)

HANDSHAKE = ["name my engine 2.1", "param merges_weight float 700 10 10000",
             "param depth_bonus int 2", "search depth 1 3", "search auto", "ready 1"]


def test_a_handshake_declares_the_engine_its_parameters_and_searches():
    declared = read_declaration(iter([*HANDSHAKE, "never read"]))
    assert declared.name == "my engine 2.1" and declared.version == 1
    assert declared.params == (Param("merges_weight", "float", 700, 10, 10000),
                               Param("depth_bonus", "int", 2))
    assert declared.depths == (1, 3) and declared.auto and not declared.nodes
    assert declared.supports(Search("depth", 3)) and not declared.supports(Search("depth", 4))
    assert declared.supports(Search("auto")) and not declared.supports(Search("nodes", 10))
    assert declared.searches() == "depth:1 to depth:3, auto"


@pytest.mark.parametrize(("lines", "said"), [
    (HANDSHAKE[:-1] + ["ready 2"], "the engine speaks protocol 2; tune2048 speaks 1"),
    (HANDSHAKE[1:], "no 'name' line before 'ready'"),
    (["name x", "ready 1"], "no 'search' line"),
    (["name x", "param a float 1", "param a float 2"], "parameter a declared twice"),
    (["name x", "param a float 20 0 10"], "default 20 outside [0, 10]"),
    (["name x", "param a int 1.5"], "not whole"),
    (["name x", "param 9lives float 1"], "not a parameter name: '9lives'"),
    (["name x", "param a float nan"], "not a finite number: 'nan'"),
    (["name x", "param a double 1"], "param NAME int|float DEFAULT [LOW HIGH]"),
    (["name x", "search depth 3 1"], "an empty range of depths"),
    (["name x", "hello there"], "not a handshake line: 'hello there'"),
    (["name x", "error no weights file"], "reports an error: no weights file"),
    (["name \x1b[31mred"], "control characters"),
    (["name " + "x" * 5000], "a line of 5,005 characters"),
    (["name x", "search auto"], "ended before its 'ready' line"),
])
def test_a_bad_handshake_is_refused_with_what_is_wrong(lines, said):
    with pytest.raises(ProtocolError) as raised:
        read_declaration(iter(lines))
    assert said in str(raised.value)


def test_a_game_line_gives_its_result_and_ignores_keys_of_later_versions():
    line = "game seed=7 score=12345 tile=1024 moves=800 positions=150000 seconds=0.81 depth=3"
    assert read_game(line) == GameResult(7, 12345, 1024, 800, 150000, 0.81)
    assert read_game("game moves=3 tile=4 score=8 seed=9") == GameResult(9, 8, 4, 3)


@pytest.mark.parametrize(("line", "said"), [
    ("game seed=7 score=1 tile=4", "without moves"),
    ("game seed=7 score=1.5 tile=4 moves=1", "not an integer: '1.5'"),
    ("game seed=7 score=1 tile=6 moves=1", "not a power of two"),
    ("game seed=7 score=1 tile=4 moves=1 seconds=inf", "not a finite number"),
    ("game seed=7 score", "not a key=value word: 'score'"),
    ("result seed=7", "expected a 'game' line"),
])
def test_a_bad_game_line_is_refused(line, said):
    with pytest.raises(ProtocolError) as raised:
        read_game(line)
    assert said in str(raised.value)


def test_transcript_lines_are_spawns_and_moves():
    assert read_step("spawn cell=15 tile=4") == Spawn(15, 4)
    assert read_step("move dir=left") == Moved("left", None)
    assert read_step("move dir=up board=0123456789abcdef") == Moved("up", tuple(range(16)))
    for line in ("spawn cell=16 tile=2", "spawn cell=1 tile=8", "move dir=north",
                 "move dir=up board=0123", "jump dir=up"):
        with pytest.raises(ProtocolError):
            read_step(line)


def test_requests_and_search_settings():
    assert set_request("a", 0.1) == "set a 0.1"
    assert play_requests(Search("depth", 3), [1, 2]) == [("play depth:3 1 2", [1, 2])]
    assert play_requests(Search("auto"), [5], trace=True) == [("trace auto 5", [5])]
    assert [str(Search.parse(text)) for text in ("depth:3", "auto", "nodes:150000")] == [
        "depth:3", "auto", "nodes:150000"]
    for text in ("depth", "auto:2", "nodes:-1", "depth:x", "ply:3"):
        with pytest.raises(ValueError, match="depth:N, auto or nodes:N"):
            Search.parse(text)


def test_many_seeds_go_in_requests_no_longer_than_a_line():
    for seeds in (list(range(10_000)), [2**64 - 1 - i for i in range(1000)], list(range(819))):
        requests = play_requests(Search("nodes", 10**11), seeds, trace=True)
        assert all(len(line) <= MAX_LINE for line, _ in requests)
        assert [seed for _, part in requests for seed in part] == seeds
        assert all(line.split()[2:] == [str(seed) for seed in part] for line, part in requests)
        for (line, _), (_, after) in itertools.pairwise(requests):  # full: the next seed is not
            assert len(f"{line} {after[0]}") > MAX_LINE


def test_a_parameter_may_say_where_it_acts_and_an_engine_that_does_not_reads_as_before():
    lines = ["name x", "param lost_penalty float 200000 0 1e6 acts=depth:2",
             "param rounds int 3 acts=auto later=ignored", "param plain float 1 0 2",
             "search depth 0 4", "search auto", "ready 1"]
    declared = read_declaration(iter(lines))
    assert declared.params == (
        Param("lost_penalty", "float", 200000, 0, 1e6, Search("depth", 2)),
        Param("rounds", "int", 3, acts=Search("auto")), Param("plain", "float", 1, 0, 2))
    assert read_declaration(iter(HANDSHAKE)).params[0].acts is None


@pytest.mark.parametrize(("line", "said"), [
    ("param a float 1 acts=ply:2", "parameter a: acts= is a search (depth:N, auto or nodes:N)"),
    ("param a float 1 acts=depth:9", ("parameter a acts at depth:9, a search it does not "
                                      "declare (depth:0 to depth:4)")),
    ("param a float 1 acts=auto", "acts at auto, a search it does not declare"),
    ("param a float 1 acts=depth:1 2", "not a key=value word: '2'"),
    ("param a float acts=depth:1", "param NAME int|float DEFAULT [LOW HIGH] [acts=SEARCH]"),
])
def test_where_a_parameter_acts_is_a_search_it_declares(line, said):
    with pytest.raises(ProtocolError) as raised:
        read_declaration(iter(["name x", line, "search depth 0 4", "ready 1"]))
    assert said in str(raised.value)
