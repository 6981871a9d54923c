"""``tune engine check -- COMMAND ...``: check an external engine before tuning it;
``tune engine defaults --output FILE -- COMMAND ...``: its declared defaults as a weights file,
the mark tuned values are compared against."""

from __future__ import annotations

import argparse
import math
import os

from tuner.cli.options import UsageError, check_depth, check_int, check_seed_range
from tuner.config.limits import MAX_TIMEOUT

MAX_GAMES = 10_000


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    engine = subparsers.add_parser(
        "engine", parents=[common], help="work with an external engine: check",
        description="Work with a 2048 engine of your own that speaks tune2048's engine protocol "
                    "(docs/engine-protocol.md).")
    actions = engine.add_subparsers(dest="engine_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", parents=[common],
        help="check an engine: handshake, rules, spawns, determinism, parameters",
        description="Start the engine COMMAND (after --) and check what tuning relies on: its "
                    "handshake, that its games follow 2048's rules move by move, that its "
                    "spawns are 2048's, that a seed gives the same game in one process and in "
                    "two, that each parameter changes play, and that a game does not depend on "
                    "the games before it, at every search checked. Its price comes first: "
                    "about 3 x --games games, 16 a parameter and 3 a search, at a game's time "
                    "at each search; --params and --search check fewer. Exit status 0 when "
                    "every check passes, 1 when one fails.")
    check.add_argument("--games", type=int, default=20,
                       help=f"games to play, 1 to {MAX_GAMES:,} (default 20)")
    check.add_argument("--seed", type=int, default=1, help="the first game's seed (default 1)")
    check.add_argument("--search", metavar="SEARCH[,SEARCH...]",
                       help="where to check, each depth:N, auto or nodes:N: the games and the "
                            "parameters at the first, per-game state at each (default: the "
                            "cheapest the engine declares, then the depth above its lowest, "
                            "auto and nodes:1000, where declared)")
    check.add_argument("--params", metavar="NAME[,NAME...]",
                       help="check only these parameters (default: every one it declares; "
                            "each costs 16 games)")
    check.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                       help="the most one game may take, all its lines together, from its "
                            "request or the end of the game before (default 60; the handshake "
                            "has 10 s in all)")
    check.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                       help="the engine's command line, after --")
    check.set_defaults(handler=check_one)
    defaults = actions.add_parser(
        "defaults", parents=[common],
        help="write the engine's declared defaults as a weights file",
        description="Start the engine COMMAND (after --) and write the values it declares as "
                    "defaults to a weights file (version 3), to play or compare with --engine.")
    defaults.add_argument("--output", "-o", required=True, metavar="FILE",
                          help="the weights file to write (refused if it exists)")
    defaults.add_argument("--depth", default="1", metavar="SEARCH",
                          help="the search the file records: N (depth:N), auto or nodes:N "
                               "(default 1)")
    defaults.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                          help="the engine's command line, after --")
    defaults.set_defaults(handler=write_defaults)


def _command(args: argparse.Namespace, action: str) -> list[str]:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError(f"no engine command: give it after --, e.g. tune engine {action} -- "
                         "python examples/engines/python_engine.py")
    return command


def write_defaults(args: argparse.Namespace) -> int:
    command = _command(args, "defaults --output defaults.yaml")
    depth = check_depth(args.depth, engine=True)
    if os.path.lexists(args.output):
        raise UsageError(f"--output: {args.output} exists; name a new file")
    from engine.external.player import EngineCommand, engine_player  # numpy: once input is good
    from engine.weights_file import WeightsFile, write_weights

    engine = EngineCommand(tuple(command), os.getcwd())
    player = engine_player(engine, None, "--", depth)
    write_weights(args.output, WeightsFile(None, player.weights, player.depth, {
        "status": "the engine's declared defaults", "command": list(command)}, player.name))
    print(f"wrote {args.output}: the defaults of engine {player.name!r} at {player.search}")
    return 0


def check_one(args: argparse.Namespace) -> int:
    command = _command(args, "check")
    check_int("--games", args.games, 1, MAX_GAMES)
    check_seed_range(args.seed, args.games)
    if not (math.isfinite(args.timeout) and 0 < args.timeout <= MAX_TIMEOUT):
        raise UsageError(f"--timeout must be a positive number of seconds, at most "
                         f"{MAX_TIMEOUT:g}, got {args.timeout}")
    from engine.external.conformance import Price, check_engine  # the rules load numba
    from engine.external.protocol import Search

    searches = _listed("--search", args.search)
    try:
        searches = [Search.parse(text) for text in searches]
    except ValueError as err:
        raise UsageError(f"--search: {err}") from None
    params = _listed("--params", args.params) if args.params is not None else None
    failed = total = 0
    for check in check_engine(command, games=args.games, seed=args.seed, searches=searches,
                              params=params, timeout=args.timeout):
        if isinstance(check, Price):
            print(f"price {check.detail}", flush=True)
            continue
        total += 1
        failed += not check.passed
        print(f"{'pass' if check.passed else 'FAIL'}  {check.name}: {check.detail}", flush=True)
    print(f"{total - failed} of {total} checks passed" if failed else
          f"all {total} checks passed")
    return 1 if failed else 0


def _listed(option: str, text: str | None) -> list[str]:
    """A comma-separated option's items (none when it is not given)."""
    items = [] if text is None else [item.strip() for item in text.split(",")]
    if text is not None and not all(items):
        raise UsageError(f"{option}: expected items separated by commas, got {text!r}")
    return items
