"""``tune families`` lists every family by name; ``tune family check SPEC`` verifies one."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from tuner.cli.options import MAX_SEED, check_int

if TYPE_CHECKING:
    from engine.families import Family

MAX_BOARDS = 1_000_000  # each is compared with the family's plain-Python reference


def add_parser(subparsers, common: argparse.ArgumentParser) -> None:
    listing = subparsers.add_parser(
        "families",
        parents=[common],
        help="list the built-in and registered families with their parameters",
        description="List every family known by name (built-in, and registered by installed "
                    "packages under the entry-point group tune2048.families).",
    )
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=list_families)

    family = subparsers.add_parser(
        "family", parents=[common], help="work with one family: check", description="Work with one family.")
    actions = family.add_subparsers(dest="family_command", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        parents=[common],
        help="verify a family: parameters, finite tables, compiled = reference, live > dead",
        description="Verify a family as the test suite verifies the built-ins. SPEC is a "
                    "family name, module:Class, or path/to/file.py:Class (imports and runs it).",
    )
    check.add_argument("spec", metavar="SPEC", help="family name or spec")
    check.add_argument("--boards", type=int, default=10_000,
                       help=f"random boards to compare at the defaults, 1 to {MAX_BOARDS:,} "
                            "(default 10000)")
    check.add_argument("--seed", type=int, default=0,
                       help="seed of the random boards and weights, a 64-bit seed (default 0)")
    check.set_defaults(handler=check_one)


def list_families(args: argparse.Namespace) -> int:
    # here only to keep start-up fast: the built-in families are numpy code
    from engine.families import FamilyNotFound, get_family
    from engine.families.registry import family_names, origin

    found: dict[str, tuple[str, Family | None, str]] = {}
    for name in family_names():
        try:
            found[name] = (origin(name), get_family(name), "")
        except FamilyNotFound as err:  # a broken registration: listed with its error
            found[name] = (origin(name), None, str(err))
    if args.json:
        print(json.dumps({name: describe(where, family, error)
                          for name, (where, family, error) in found.items()}, indent=2))
        return 0
    for name, (where, family, error) in found.items():
        if family is None:
            print(f"{name}  ({where}): cannot be loaded: {error}\n")
            continue
        print(f"{name}  ({where}): {family.summary}")
        ranges = [f"[{p.low:g}, {p.high:g}]" for p in family.params]
        name_width = max(len(p.name) for p in family.params)
        range_width = max(map(len, ranges))
        for p, box in zip(family.params, ranges):
            print(f"  {p.name:<{name_width}}  default {p.default:<10g} range {box:<{range_width}}"
                  f"  {p.doc}")
        print()
    return 0


def describe(where: str, family: Family | None, error: str) -> dict:
    if family is None:
        return {"origin": where, "error": error}
    return {
        "origin": where,
        "summary": family.summary,
        "params": [{"name": p.name, "default": p.default, "low": p.low, "high": p.high,
                    "doc": p.doc} for p in family.params],
    }


def check_one(args: argparse.Namespace) -> int:
    check_int("--boards", args.boards, 1, MAX_BOARDS)
    check_int("--seed", args.seed, 0, MAX_SEED)
    from engine.families import get_family  # here only to keep start-up fast (numpy)
    from engine.family_check import FamilyCheckError, check_family  # imports the engine

    family = get_family(args.spec)
    try:
        passed = check_family(family, args.boards, args.seed)
    except FamilyCheckError as err:
        raise FamilyCheckError(f"{args.spec}: {err}") from None
    print(f"family {family.name or args.spec} ({args.spec}): {len(family.params)} parameters")
    for line in passed:
        print(f"  ok  {line}")
    return 0
