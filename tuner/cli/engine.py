"""``tune engine check -- COMMAND ...``: check an external engine before tuning it."""

from __future__ import annotations

import argparse
import math

from tuner.cli.options import UsageError, check_int, check_seed_range

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
                    "two, and that each parameter changes play. Exit status 0 when every check "
                    "passes, 1 when one fails.")
    check.add_argument("--games", type=int, default=20,
                       help=f"games to play, 1 to {MAX_GAMES:,} (default 20)")
    check.add_argument("--seed", type=int, default=1, help="the first game's seed (default 1)")
    check.add_argument("--search", metavar="SEARCH",
                       help="depth:N, auto or nodes:N (default: the cheapest it declares)")
    check.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS",
                       help="the longest wait for one game (default 60)")
    check.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND ...",
                       help="the engine's command line, after --")
    check.set_defaults(handler=check_one)


def check_one(args: argparse.Namespace) -> int:
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        raise UsageError("no engine command: give it after --, e.g. tune engine check -- "
                         "python examples/engines/python_engine.py")
    check_int("--games", args.games, 1, MAX_GAMES)
    check_seed_range(args.seed, args.games)
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError(f"--timeout must be a positive number of seconds, got {args.timeout}")
    from engine.external.conformance import check_engine  # the engine's rules load numba
    from engine.external.protocol import Search

    try:
        search = Search.parse(args.search) if args.search is not None else None
    except ValueError as err:
        raise UsageError(f"--search: {err}") from None
    failed = total = 0
    for check in check_engine(command, games=args.games, seed=args.seed, search=search,
                              timeout=args.timeout):
        total += 1
        failed += not check.passed
        print(f"{'pass' if check.passed else 'FAIL'}  {check.name}: {check.detail}", flush=True)
    print(f"{total - failed} of {total} checks passed" if failed else
          f"all {total} checks passed")
    return 1 if failed else 0
