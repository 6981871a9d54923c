"""Strict YAML reading for every file tune2048 reads (configs, weights files, a run's stored config).

PyYAML follows YAML 1.1, whose implicit types surprise: ``1e-8`` is a string, ``1:30`` is the
integer 90 (base 60), ``017`` is octal 15, ``1_000`` is 1000, ``0b101`` is 5 and ``yes``/``no``/
``on``/``off`` are booleans. ``load`` resolves plain scalars by the YAML 1.2 core schema instead
(https://yaml.org/spec/1.2.2/#1032-tag-resolution):

- null: ``~``, ``null`` (``Null``, ``NULL``) and the empty value;
- bool: ``true``/``false`` (``True``, ``TRUE``, ``False``, ``FALSE``); ``yes``, ``on``... are strings;
- int: ``[-+]?[0-9]+`` (decimal, so ``017`` is 17), ``0o[0-7]+`` and ``0x[0-9a-fA-F]+``;
  ``1:30``, ``0b101`` and ``1_000`` are strings, which a caller's type check then names;
- float: ``1.5``, ``1e-8``, ``1.e5``, ``.5``, ``-.5e-3``, ``.inf``, ``-.inf``, ``.nan``;
- everything else is a string: dates too (no timestamps), and ``<<`` (no merge keys).

The reader is also strict where a mistake would otherwise pass silently or blow up:

- a key repeated in a mapping (a second ``evaluation:`` section, say) is an error, not a quiet
  overwrite of the first;
- aliases (``*name``) are refused: our files never need them, and refusing them stops
  "billion laughs" documents that expand a few lines into gigabytes;
- nesting deeper than ``MAX_DEPTH`` collections is refused before Python's recursion limit is hit.

Every refusal is a ``yaml.MarkedYAMLError`` with ``problem`` and ``problem_mark``, so callers can
print the line; values echoed in messages are cut to ``MAX_ECHO`` characters.

``dump`` is the one writer of the YAML files tune2048 reads back (weights files, a run's
``config.yaml``). PyYAML's own dumper decides what to quote by YAML 1.1, so it writes the string
``1e5`` or ``0o17`` bare, and ``load`` reads it back as a number (a run named ``1e5`` could not
be resumed). ``dump`` quotes every string that either schema would read as something else, and
tags every other value (a date) that ``load`` would read back as a string.
"""

from __future__ import annotations

import math
import re
from typing import Any, ClassVar

import yaml
from yaml.composer import ComposerError
from yaml.constructor import BaseConstructor, ConstructorError
from yaml.events import AliasEvent, CollectionStartEvent
from yaml.nodes import MappingNode, ScalarNode

MAX_DEPTH = 64
MAX_ECHO = 80


def _cut(text: str) -> str:
    """``text`` cut to ``MAX_ECHO`` characters, so a huge value cannot flood a message."""
    return text if len(text) <= MAX_ECHO else f"{text[:MAX_ECHO - 3]}..."


def _echo(value: Any) -> str:
    return _cut(repr(value))


def _to_int(text: str) -> int:
    # Base 0 reads the 0x and 0o prefixes but refuses "017"; YAML 1.2 reads that as decimal.
    return int(text, 0) if text.startswith(("0x", "0o")) else int(text, 10)


def _to_float(text: str) -> float:
    special = text.lstrip("+-").lower()
    if special == ".nan":
        return math.nan
    if special == ".inf":
        return -math.inf if text.startswith("-") else math.inf
    return float(text)


# The YAML 1.2 core schema: (type, pattern, first characters a match can start with, converter).
# int comes before float: a plain "42" matches both and must stay an int.
_CORE_SCHEMA = (
    ("null", r"~|null|Null|NULL|", ["~", "n", "N", ""], lambda _text: None),
    ("bool", r"true|True|TRUE|false|False|FALSE", list("tTfF"),
     lambda text: text.lower() == "true"),
    ("int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", list("-+0123456789"), _to_int),
    ("float",
     (r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
      r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)"),
     list("-+.0123456789"), _to_float),
)


class _Loader(yaml.SafeLoader):
    """The safe loader with the YAML 1.2 core schema, no aliases, no merge keys, no duplicate
    keys and bounded nesting."""

    # A fresh table, so SafeLoader's YAML 1.1 resolvers are neither inherited nor modified.
    yaml_implicit_resolvers: ClassVar[dict] = {}

    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):
        """Refuse aliases, and collections nested deeper than ``MAX_DEPTH``: PyYAML composes
        recursively, so a few hundred ``[`` would otherwise end in a RecursionError."""
        if self.check_event(AliasEvent):
            event = self.get_event()
            raise ComposerError(None, None, f"aliases (*{_cut(event.anchor)}) are not allowed",
                                event.start_mark)
        if not self.check_event(CollectionStartEvent):
            return super().compose_node(parent, index)
        if self._depth == MAX_DEPTH:
            raise ComposerError(None, None, f"nesting deeper than {MAX_DEPTH} levels",
                                self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        """Refuse a repeated key; skip SafeConstructor's merge-key (``<<``) flattening, so an
        explicit ``!!merge`` key has no constructor and is refused."""
        if isinstance(node, MappingNode):
            self._refuse_repeated_keys(node, deep)
        return BaseConstructor.construct_mapping(self, node, deep=deep)

    def _refuse_repeated_keys(self, node: MappingNode, deep: bool) -> None:
        first_marks: dict[Any, yaml.Mark] = {}
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                first = first_marks.get(key)
            except TypeError:
                continue  # an unhashable key: BaseConstructor reports it
            if first is not None:
                raise ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"duplicate key {_echo(key)} (first on line {first.line + 1})",
                    key_node.start_mark,
                )
            first_marks[key] = key_node.start_mark

    def construct_undefined(self, node):
        """Replaces SafeConstructor's message, which echoes a tag of any length."""
        raise ConstructorError(None, None, f"unknown tag {_echo(node.tag)}", node.start_mark)


def _core_constructor(name: str, pattern: re.Pattern, convert):
    """A constructor that applies the core schema to explicitly tagged scalars too (``!!int 017``
    is 17, ``!!int 1:30`` an error), so a tag cannot bring YAML 1.1 back."""

    def construct(loader: _Loader, node) -> Any:
        text = loader.construct_scalar(node)
        if not pattern.fullmatch(text):
            raise ConstructorError(None, None, f"{_echo(text)} is not a YAML 1.2 {name}",
                                   node.start_mark)
        try:
            return convert(text)
        except ValueError:  # an integer longer than Python converts (sys.get_int_max_str_digits)
            message = f"a number of {len(text)} digits is too long (at most 4300 digits)"
            raise ConstructorError(None, None, message, node.start_mark) from None

    return construct


_STR_TAG = "tag:yaml.org,2002:str"
# what ``_Dumper.resolve`` answers for a plain scalar that the two schemas read differently: a tag
# no node has, so a string of that text is quoted and any other value is written with its tag
_AMBIGUOUS = "tag:tune2048,2024:ambiguous-between-yaml-1.1-and-1.2"
_YAML_1_1 = yaml.resolver.Resolver()  # PyYAML's own resolvers: what yaml.safe_load reads


class _Dumper(yaml.SafeDumper):
    """The safe dumper, deciding what a plain scalar means as ``load`` reads it."""

    yaml_implicit_resolvers: ClassVar[dict] = {}  # the core schema's, as _Loader's

    def resolve(self, kind, value, implicit):
        tag = super().resolve(kind, value, implicit)
        if kind is ScalarNode and implicit[0] and tag == _STR_TAG and \
                _YAML_1_1.resolve(kind, value, implicit) != _STR_TAG:
            return _AMBIGUOUS  # yes, 1:30, 2024-01-01: quoted, for a YAML 1.1 reader too
        return tag


def _install_core_schema() -> None:
    """Give ``_Loader`` the core schema's resolvers, and constructors that follow it, and
    ``_Dumper`` the same resolvers."""
    _Loader.add_constructor(None, _Loader.construct_undefined)
    for name, pattern, first, convert in _CORE_SCHEMA:
        tag = f"tag:yaml.org,2002:{name}"
        regex = re.compile(rf"(?:{pattern})\Z")
        _Loader.add_implicit_resolver(tag, regex, first)
        _Loader.add_constructor(tag, _core_constructor(name, regex, convert))
        _Dumper.add_implicit_resolver(tag, regex, first)


_install_core_schema()


def load(text: str) -> Any:
    """Parse one YAML document strictly; raises ``yaml.MarkedYAMLError`` (a ``yaml.YAMLError``)
    on invalid or refused YAML."""
    return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: safe


def dump(document: Any) -> str:
    """``document`` as YAML text that ``load`` reads back as the same values, in block style
    with keys in their order."""
    return yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=False)
