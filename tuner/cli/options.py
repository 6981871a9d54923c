"""What the subcommands share: parent parsers for their common options, and the checks of
command-line values.

A parent parser is added to a subcommand with ``parents=[...]``, so an option shared by several
commands is written once. The options every command takes (``--quiet``, ``--verbose``,
``--debug``) may stand before or after the subcommand: in the subcommands their default is
``SUPPRESS``, so a value given before the subcommand is not replaced by the subcommand's default.

A bad value raises ``UsageError`` naming the option and what it takes. Counts are bounded so that
a typo (``--games 10000000000``) is refused at once instead of exhausting memory: every game's
result is kept until the summary is printed. Nothing here imports the engine's compiled code.
"""

from __future__ import annotations

import argparse
import math
import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.defaults import DEFAULT_CUTOFF
from engine.depth import PLAYING, DepthError, DepthPolicy, parse_depth
from engine.echo import shorten
from engine.errors import BadInput
from engine.external.player import DEFAULT_GAME_TIMEOUT, EngineCommand
from engine.external.protocol import ENGINE_LIMITS
from engine.weights_file import read_weights
from tuner import commands
from tuner.config import MAX_WORKERS
from tuner.config.limits import MAX_TIMEOUT

if TYPE_CHECKING:
    from engine.weights_file import WeightsFile
    from tuner.config import RaySection, RunConfig

MAX_GAMES = 1_000_000  # games one command plays per player (results are kept in memory)
MAX_SEED = 2**64 - 1  # game seeds are 64-bit


@dataclass(frozen=True)
class ConfigOption:
    """A command-line option that sets a config key: declared here once, it is added to every
    command that takes its section's options (``ray_options``, ``search_options``), applied by
    ``with_options`` and read by the config's own checks. ``help`` may name ``{default}`` (the
    command's default) and ``{what}`` (what the command does with it)."""

    flag: str
    key: str
    metavar: str
    help: str
    type: Callable[[str], Any] = str

    @property
    def dest(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")


CONFIG_OPTIONS = (
    ConfigOption("--workers", "ray.workers", "N",
                 f"local Ray worker CPUs, 1 to {MAX_WORKERS} (default: {{default}})", int),
    ConfigOption("--address", "ray.address", "ADDRESS",
                 "join a Ray cluster: 'auto' or HOST:PORT; 'local': start Ray on this machine "
                 "(in place of a run's saved address)"),
    ConfigOption("--depth", "search.depth", "POLICY", "{what}: D, auto, auto:cap=N or nodes:N"),
)


def add_config_options(parser: argparse.ArgumentParser, section: str, **values: str) -> None:
    """The ``CONFIG_OPTIONS`` of a config section, their help filled in with ``values``."""
    for option in CONFIG_OPTIONS:
        if option.key.startswith(f"{section}."):
            parser.add_argument(option.flag, type=option.type, metavar=option.metavar,
                                help=option.help.format(**values))


class UsageError(BadInput):
    """A command-line argument is out of range or conflicts with another."""


class Parser(argparse.ArgumentParser):
    """argparse, reporting a bad command line as bad input: one line, ``tune: error: ...``, exit
    status 2 (``tuner.cli.main``)."""

    def error(self, message: str):
        raise UsageError(f"{message} (see: {self.prog} --help)")


def verbosity(default=argparse.SUPPRESS) -> argparse.ArgumentParser:
    """``--quiet``, ``--verbose``, ``--debug``: the main parser gives them their defaults, the
    subcommands ``SUPPRESS`` so that either place works."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_mutually_exclusive_group()
    group.add_argument("--quiet", action="store_true", default=default,
                       help="only warnings and errors")
    group.add_argument("--verbose", action="store_true", default=default, help="debug output")
    parent.add_argument("--debug", action="store_true", default=default,
                        help="show the traceback of bad input")
    return parent


def ray_options(workers_default: str = "all cores") -> argparse.ArgumentParser:
    """``--workers`` and ``--address``: where games are played."""
    parent = argparse.ArgumentParser(add_help=False)
    add_config_options(parent, "ray", default=workers_default)
    return parent


def trusted_families() -> argparse.ArgumentParser:
    """``--family-file`` and ``--family-module``: the family code a weights file may import (a
    weights file alone never runs code)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--family-file", action="append", default=[], metavar="PY",
                        help="allow a weights file's family to be imported from this file "
                             "(repeatable)")
    parent.add_argument("--family-module", action="append", default=[], metavar="MODULE",
                        help="allow a weights file's family to be imported from this module "
                             "(repeatable)")
    return parent


def engine_options() -> argparse.ArgumentParser:
    """``--engine`` and ``--game-timeout``: an external engine that plays the weights (a weights
    file names its engine, never how to start it)."""
    parent = argparse.ArgumentParser(add_help=False)
    parent.add_argument("--engine", metavar="COMMAND",
                        help="play through this external engine (docs/engine-protocol.md): its "
                             "command line as one string, run in the current directory")
    parent.add_argument("--game-timeout", type=float, default=DEFAULT_GAME_TIMEOUT,
                        metavar="SECONDS", help="with --engine: the most one game may take, all "
                                                "its lines together (default "
                                                f"{DEFAULT_GAME_TIMEOUT:g})")
    return parent


def engine_command(args: argparse.Namespace) -> EngineCommand | None:
    """``--engine`` as the engine to start (None: not given); ``UsageError`` saying what is
    wrong."""
    if args.engine is None:
        return None
    try:
        words = shlex.split(args.engine)
    except ValueError as err:
        raise UsageError(f"--engine: cannot split {args.engine!r} into words: {err}") from None
    if not words:
        raise UsageError("--engine needs the engine's command line, e.g. --engine ./c_engine")
    if not (math.isfinite(args.game_timeout) and 0 < args.game_timeout <= MAX_TIMEOUT):
        raise UsageError(f"--game-timeout must be a number of seconds above 0 and at most "
                         f"{MAX_TIMEOUT:g}, got {args.game_timeout}")
    return EngineCommand(tuple(words), os.getcwd(), args.game_timeout)


def read_family_weights(path: str, args: argparse.Namespace) -> WeightsFile:
    """The weights file (or baseline) at ``path``, of a family (not an engine) whose heuristic
    is finite at those weights; the family code it may import is what ``--family-file`` and
    ``--family-module`` name."""
    from engine import finite  # here only to keep start-up fast: the families are numpy code

    loaded = read_weights(path, args.family_file, family_modules=args.family_module)
    check_not_engine(path, loaded)
    finite.check_weights_from(path, loaded.family, loaded.weights)
    return loaded


def check_not_engine(source: str, loaded: WeightsFile) -> None:
    """Refuse an external engine's weights where no ``--engine`` names how to start it."""
    if loaded.engine is not None:
        raise BadInput(f"{source}: holds weights of engine {loaded.engine!r}: name the command "
                       "that starts it with --engine COMMAND")


def check_depth(value: str | None, engine: bool = False) -> DepthPolicy | None:
    """``--depth`` as a policy (None: not given); ``UsageError`` saying what is wrong. For an
    external ``engine`` any depth it may declare: its declaration is checked once it is started."""
    if value is None:
        return None
    try:
        return parse_depth(value, ENGINE_LIMITS if engine else PLAYING)
    except DepthError as err:
        raise UsageError(f"--depth: {err}") from None


def search_options(depth_help: str) -> argparse.ArgumentParser:
    """``--depth`` and ``--cutoff``: how deep the games search."""
    parent = argparse.ArgumentParser(add_help=False)
    add_config_options(parent, "search", what=depth_help)
    parent.add_argument("--cutoff", type=float, default=DEFAULT_CUTOFF, metavar="P",
                        help="probability cutoff, in [0, 1) (0: exact; default "
                             f"{DEFAULT_CUTOFF:g})")
    return parent


def check_int(option: str, value: int | None, low: int, high: int) -> None:
    """Refuse an integer option outside ``low..high`` (None: not given, nothing to check)."""
    if value is not None and not low <= value <= high:
        raise UsageError(f"{option} must be from {low:,} to {high:,}, got {shorten(str(value))}")


def check_cutoff(value: float) -> None:
    """The search's probability cutoff: [0, 1), 0 for an exact search."""
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise UsageError(f"--cutoff must be in [0, 1) (0: exact search), got {value}")


def check_seed_range(seed: int, games: int) -> None:
    """Game i plays seed SEED + i: every one of them must be a 64-bit seed."""
    if not 0 <= seed <= MAX_SEED - max(games - 1, 0):
        raise UsageError(f"--seed must be from 0 to 2**64 - GAMES (game i plays seed SEED + i), "
                         f"got {shorten(str(seed))}")


def with_options(config: RunConfig | RaySection,
                 args: argparse.Namespace) -> RunConfig | RaySection:
    """``config`` (a run config, or the Ray section of a command that has none) with what the
    command line gives in place of its keys: ``--workers``, ``--address``, and ``--depth`` for
    a config. The config's own checks read the result, so a value is refused as it would be in
    the file, in a line that names the option (``ConfigError``)."""
    given = {option.key: getattr(args, option.dest) for option in CONFIG_OPTIONS
             if getattr(args, option.dest, None) is not None}
    return config.with_values(given, {option.key: option.flag for option in CONFIG_OPTIONS})


def command_with(args: argparse.Namespace, option: str, value: str) -> str:
    """The command line ``args`` came from, quoted to paste into a shell, with ``option``'s value
    replaced by ``value`` wherever it is given (``--output FILE``, ``--output=FILE``, or a
    prefix argparse took for it): what a refusal of that value tells the user to run instead."""
    argv = list(args.argv)
    at = 0
    while at < len(argv) and argv[at] != "--":
        name, equals, _given = argv[at].partition("=")
        if len(name) > 2 and option.startswith(name):
            if equals:
                argv[at] = f"{name}={value}"
            elif at + 1 < len(argv):
                at += 1
                argv[at] = value
        at += 1
    return commands.tune(*argv)
