"""The weights file: the one contract between the tuner, which writes it, and the engine.

A YAML mapping::

    format: tune2048-weights    # fixed marker
    version: 1                  # bumped on any incompatible change
    family: classic             # a family spec (engine.families.registry): a built-in or
                                # registered name, module:Class, or file.py:Class relative to
                                # this file's directory
    depth: 2                    # search depth the weights were tuned at (0..8)
    weights:                    # every parameter of the family, by name, finite floats
      lost_penalty: 200000.0
      ...
    provenance: {...}           # free-form mapping; the tuner records how the weights were made

Version 2 is version 1 whose ``depth`` may be any depth policy (``engine.depth``: ``auto``,
``auto:cap=6``, ``nodes:200000``, or an integer). A file is written as version 1 whenever its
depth is a plain integer, so that older readers keep reading it; one with a policy is version 2,
which an older reader refuses in one line (an unsupported version).

Version 3 holds the weights of an external engine (docs/engine-protocol.md) in place of a
family's: ``engine: NAME``, the name the engine declares, instead of ``family``; ``weights`` its
parameters by name; ``depth`` its search (an integer ``depth:N``, ``auto`` the engine's own
rule, ``nodes:N``). The file never says how to start the engine: whoever plays it names the
command (``--engine``), and the engine's declaration must carry the same name.

This module alone reads and writes it. Reading checks everything and raises ``WeightsFileError``
(a ``ValueError``) naming the file and the field; writing is atomic, and writes only what
reading takes back as it was written (``weights_text``): the YAML of ``engine.yaml_text.dump``,
no larger than ``MAX_BYTES``.

Reading a weights file alone never runs code: only built-in and registered families load by
name. A family in a file is imported only if the reader names that file in ``family_files``
(``--family-file``), and a ``module:Class`` family only if the reader names the module in
``family_modules`` (``--family-module``); otherwise reading refuses, saying which to add.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from engine import yaml_text
from engine.atomic import atomic_write
from engine.baselines import baseline_names, baseline_path
from engine.depth import PLAYING, DepthError, DepthPolicy, parse_depth, to_yaml
from engine.echo import echo, shorten
from engine.errors import BadInput
from engine.external.protocol import ENGINE_LIMITS

FORMAT_MARKER = "tune2048-weights"
FORMAT_VERSIONS = (1, 2, 3)  # 2: the depth may be a policy; 3: an external engine's weights
# A weights file is a few hundred bytes by hand; a run's best.yaml carries the run's resolved
# config in its provenance (at most 1 MiB as config.yaml: tuner.config.limits.MAX_CONFIG_BYTES),
# indented 4 more spaces a line, and a weight per parameter: under 3 MiB for the largest config
# (tests/test_round_trips.py writes it). More is not a weights file (or is /dev/zero).
MAX_BYTES = 4 << 20
MAX_SPEC = 256  # characters of a family spec
TOP_LEVEL_KEYS = ("format", "version", "family", "depth", "weights", "provenance")
ENGINE_KEYS = ("format", "version", "engine", "depth", "weights", "provenance")  # version 3


class WeightsFileError(BadInput):
    """A weights file is unreadable or invalid; the message names the file and the field."""


@dataclass
class WeightsFile:
    """The contents of a weights file. ``family`` is a spec that works from any directory (a
    family file's path is absolute); the file itself records it relative to its directory. An
    external engine's weights have ``engine``, the name it declares, and no family."""

    family: str | None
    weights: dict[str, float]
    depth: DepthPolicy
    provenance: dict[str, Any] | None = None  # None reads as {}
    engine: str | None = None

    def __post_init__(self) -> None:
        # {} by hand: a field(default_factory=dict) would run Python code in __set_name__ as this
        # module loads, where Python 3.11 turns a Ctrl-C into RuntimeError, not KeyboardInterrupt
        if self.provenance is None:
            self.provenance = {}

    def to_yaml(self, directory: str | os.PathLike = ".") -> str:
        """The file's text, for a file in ``directory``; weights in the order given."""
        from engine.families.registry import relative_spec  # here only to keep start-up fast

        player = {"engine": self.engine} if self.engine is not None else {
            "family": relative_spec(self.family, directory)}
        document = {
            "format": FORMAT_MARKER,
            "version": 3 if self.engine is not None else 1 if isinstance(self.depth, int) else 2,
            **player,
            "depth": to_yaml(self.depth),
            "weights": {name: float(value) for name, value in self.weights.items()},
            "provenance": self.provenance,
        }
        return yaml_text.dump(document)


def write_weights(path: str | os.PathLike, weights_file: WeightsFile) -> None:
    """Validate and write a weights file atomically."""
    atomic_write(path, weights_text(path, weights_file))


def weights_text(path: str | os.PathLike, weights_file: WeightsFile) -> str:
    """The text of ``weights_file`` as a file at ``path``, refused (``WeightsFileError``) where
    ``read_weights`` would refuse it: never write what cannot be read."""
    directory = Path(path).parent
    text = weights_file.to_yaml(directory)
    size = len(text.encode("utf-8"))
    if size > MAX_BYTES:
        raise WeightsFileError(f"{path}: cannot write a weights file of {size:,} bytes: it would "
                               f"be read back only up to {MAX_BYTES:,} (its provenance is too "
                               "large)")
    parse_weights(text, str(path), directory, True, True)
    return text


def read_weights(
    path: str | os.PathLike,
    family_files: Collection[str | os.PathLike] = (),
    family_modules: Collection[str] = (),
) -> WeightsFile:
    """Read and validate a weights file.

    Args:
        path: the weights file, or the name of a shipped baseline (``classic-reference``; see
            ``engine.baselines``) where no file of that name exists.
        family_files: family files the user named: the only files whose code this may import.
        family_modules: modules the user named: the only modules a ``module:Class`` family
            may be imported from.
    """
    path = weights_path(path)
    try:
        with Path(path).open("rb") as file:
            raw = file.read(MAX_BYTES + 1)  # never more: the path may be /dev/zero
    except OSError as err:
        baselines = f" (nor a baseline: {', '.join(baseline_names())})" \
            if _may_be_a_name(path) else ""
        raise WeightsFileError(
            f"{path}: cannot read weights file: {err.strerror}{baselines}") from None
    if len(raw) > MAX_BYTES:
        raise WeightsFileError(f"{path}: not a weights file (larger than {MAX_BYTES // 1024} KiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise WeightsFileError(f"{path}: not a weights file (not UTF-8 text)") from None
    return parse_weights(text, str(path), Path(path).parent, family_files, family_modules)


def weights_path(path: str | os.PathLike) -> Path:
    """The file a ``--weights`` value names: the path itself, or, where no such file exists and
    the value is a bare name, the shipped baseline of that name."""
    if _may_be_a_name(path) and not Path(path).exists():
        baseline = baseline_path(str(path))
        if baseline is not None:
            return baseline
    return Path(path)


def _may_be_a_name(path: str | os.PathLike) -> bool:
    """A value with no directory part and no YAML suffix could name a baseline."""
    text = str(path)
    return "/" not in text and os.sep not in text and not text.endswith((".yaml", ".yml"))


def parse_weights(
    text: str,
    source: str,
    directory: str | os.PathLike = ".",
    family_files: bool | Collection[str | os.PathLike] = (),
    family_modules: bool | Collection[str] = (),
) -> WeightsFile:
    """Validate the text of a weights file; ``source`` names it in error messages.

    Family files are relative to ``directory`` and imported if ``family_files`` allows it, a
    family module if ``family_modules`` does (True: any; see ``engine.families.get_family``).
    """

    # here only to keep start-up fast: the families are numpy code, which the command line
    # reading its arguments never needs
    from engine.families import (
        FamilyNotFound,
        UntrustedFamilyFile,
        UntrustedFamilyModule,
        get_family,
    )
    from engine.families.guard import shown_path
    from engine.families.registry import canonical_spec

    def fail(where: str, message: str) -> WeightsFileError:
        return WeightsFileError(f"{source}: {where}: {message}")

    try:
        document = yaml_text.load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f"line {mark.line + 1}" if mark else "YAML"
        problem = getattr(err, "problem", None) or "not YAML"
        raise fail(line, f"invalid YAML ({shorten(str(problem))})") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise fail("YAML", f"invalid YAML ({shorten(str(err))})") from None
    if document is None:
        raise WeightsFileError(f"{source}: the weights file is empty")
    if not isinstance(document, dict):
        raise fail("top level", f"expected a mapping, got {type(document).__name__} "
                                f"{echo(document)}")
    version = document.get("version")
    keys = ENGINE_KEYS if version == 3 else TOP_LEVEL_KEYS
    unknown = sorted(str(k) for k in document if k not in keys)
    if unknown:
        hint = ("; version 3 names an engine, not a family" if version == 3 and "family" in unknown
                else "; only version 3 names an engine" if unknown == ["engine"] else "")
        raise fail(shorten(unknown[0]), f"unknown field (expected one of {', '.join(keys)})"
                                        f"{hint}")
    for key in keys[:-1]:
        if key not in document:
            raise fail(key, "missing field")
    if document["format"] != FORMAT_MARKER:
        raise fail("format", f"expected {FORMAT_MARKER!r}, got {echo(document['format'])}")
    if isinstance(version, bool) or not isinstance(version, int):
        raise fail("version", f"expected the integer 1, 2 or 3, got {echo(version)}")
    if version not in FORMAT_VERSIONS:
        raise fail("version", f"unsupported version {echo(version)} (this engine reads 1, 2 "
                              "and 3)")
    if version == 3:
        return _engine_weights(document, fail)
    spec = document["family"]
    if not isinstance(spec, str) or not spec or len(spec) > MAX_SPEC:
        raise fail("family", f"expected a family name or spec of at most {MAX_SPEC} characters, "
                             f"got {echo(spec)}")
    try:
        family = get_family(spec, directory, family_files, family_modules)
    except UntrustedFamilyFile as err:
        raise fail("family", f"{err}: add --family-file {shown_path(err.path)}") from None
    except UntrustedFamilyModule as err:
        raise fail("family", f"{err}: add --family-module {err.module}") from None
    except FamilyNotFound as err:
        raise fail("family", str(err)) from None
    depth = document["depth"]
    if version == 1 and (isinstance(depth, bool) or not isinstance(depth, int)):
        raise fail("depth", f"expected an integer from 0 to {PLAYING.fixed} (a depth policy "
                            f"needs version 2), got {echo(depth)}")
    try:
        depth = parse_depth(depth)
    except DepthError as err:
        raise fail("depth", str(err)) from None
    weights = document["weights"]
    if not isinstance(weights, dict):
        raise fail("weights", f"expected a mapping of parameter names to numbers, got "
                              f"{echo(weights)}")
    for name in family.param_names:
        if name not in weights:
            raise fail(f"weights.{name}", f"missing parameter of family {echo(spec)}")
    for name in weights:
        if name not in family.param_names:
            raise fail(f"weights.{shorten(str(name))}", f"not a parameter of family {echo(spec)} "
                                                        f"({', '.join(family.param_names)})")
    values = _numbers(weights, fail)
    ordered = {name: values[name] for name in family.param_names}
    return WeightsFile(family=canonical_spec(spec, directory), weights=ordered, depth=depth,
                       provenance=_provenance(document, fail))


def _engine_weights(document: dict, fail) -> WeightsFile:
    """A version-3 file's contents: an external engine's name, search and values."""
    name = document["engine"]
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_SPEC:
        raise fail("engine", f"expected the name the engine declares, at most {MAX_SPEC} "
                             f"characters, got {echo(name)}")
    try:  # any depth an engine may declare: its own range is checked once it is started
        depth = parse_depth(document["depth"], ENGINE_LIMITS)
    except DepthError as err:
        raise fail("depth", str(err)) from None
    weights = document["weights"]
    if not isinstance(weights, dict) or not all(isinstance(key, str) for key in weights):
        raise fail("weights", f"expected a mapping of parameter names to numbers, got "
                              f"{echo(weights)}")
    return WeightsFile(family=None, weights=_numbers(weights, fail), depth=depth,
                       provenance=_provenance(document, fail), engine=name)


def _numbers(weights: dict, fail) -> dict[str, float]:
    """Each weight as a finite float, by name."""
    values: dict[str, float] = {}
    for name, value in weights.items():
        where = f"weights.{shorten(str(name))}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise fail(where, f"expected a number, got {echo(value)}")
        try:
            number = float(value)
        except OverflowError:
            raise fail(where, f"expected a finite number, got an integer of {len(str(value))} "
                              "digits (beyond a float's range)") from None
        if not math.isfinite(number):
            raise fail(where, f"expected a finite number, got {echo(value)}")
        values[name] = number
    return values


def _provenance(document: dict, fail) -> dict:
    provenance = document.get("provenance") or {}
    if not isinstance(provenance, dict):
        raise fail("provenance", f"expected a mapping, got {echo(provenance)}")
    return provenance
