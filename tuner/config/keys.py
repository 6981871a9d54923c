"""How a config section declares its keys: ``key(read)`` makes a dataclass field that carries its
own check and default, and ``Section`` derives the rest from the fields.

Parsing, the list of allowed keys, ``resolved()`` and the keys a resume may change all derive
from the fields (``tuner.config.sections`` holds the sections themselves). The readers here
(``integer``, ``number``, ``choice``, ``text``, ``integer_or_auto``) are the ones several keys
share; a reader that only one key needs lives beside its section.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field, fields
from typing import Any, ClassVar

from engine.echo import echo
from tuner.checker import Checker
from tuner.config.limits import AUTO
from tuner.errors import ConfigError

Read = Callable[[Checker, dict, str, str], Any]  # (check, section mapping, key, section name)
_KEEP = object()  # key(omit=...)'s default: no value is left out of resolved()


def key(read: Read, *, resumable: bool = False, omit: Any = _KEEP) -> Any:
    """A section's key: ``read`` checks the written value and returns it, or its default when it
    is absent. A ``resumable`` key may change when a run is resumed: it decides when the run stops
    or where it runs, never what it computes. A value equal to ``omit`` is left out of
    ``resolved()``, for a key that run directories written before it existed lack."""
    return field(metadata={"read": read, "resumable": resumable, "omit": omit})


def integer(**options) -> Read:
    return lambda check, mapping, name, path: check.integer(mapping, name, path, **options)


def integer_or_auto(**options) -> Read:
    """An integer, or ``auto``: chosen by the tuner, as the key's documentation says."""
    def read(check: Checker, mapping: dict, name: str, path: str) -> int | str | None:
        value = mapping.get(name, options.get("default"))
        if value == AUTO:
            return AUTO
        if isinstance(value, str):
            check.problem(f"{path}.{name}", f"expected an integer or {AUTO}, got {echo(value)}")
            return options.get("default")
        return check.integer(mapping, name, path, **options)
    return read


def number(**options) -> Read:
    return lambda check, mapping, name, path: check.number(mapping, name, path, **options)


def choice(choices: tuple[str, ...], default: str) -> Read:
    return lambda check, mapping, name, path: check.choice(mapping, name, path, choices, default)


def text(**options) -> Read:
    return lambda check, mapping, name, path: check.text(mapping, name, path, **options)


class Section:
    """A config section: its ``NAME`` in the YAML, whether it is ``REQUIRED``, and its keys as
    fields made with ``key``; ``cross_check`` holds the checks that involve several keys."""

    NAME: ClassVar[str]
    REQUIRED: ClassVar[bool] = True

    @classmethod
    def parse(cls, check: Checker, document: dict) -> Section:
        mapping = check.section(document, cls.NAME, tuple(f.name for f in fields(cls)),
                                required=cls.REQUIRED)
        section = cls(**{f.name: f.metadata["read"](check, mapping, f.name, cls.NAME)
                         for f in fields(cls)})
        if cls.NAME not in check.bad_sections:
            section.cross_check(check, mapping)
        return section

    def cross_check(self, check: Checker, mapping: dict) -> None:
        """Record the problems between keys (``mapping``: the section as written)."""

    def to_config(self) -> dict[str, Any]:
        """The section as a plain mapping, every default filled in."""
        section = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata["omit"] is not _KEEP and value == f.metadata["omit"]:
                continue
            section[f.name] = value.to_config() if hasattr(value, "to_config") else value
        return section

    @classmethod
    def from_values(cls, source: str, options: dict[str, str] | None = None,
                    **values) -> Section:
        """The section with these values (None: left out) and every other key at its default,
        checked as a config's would be: ``ConfigError`` names what is wrong, after ``source``
        (or as ``options`` names a key path a command-line option gave)."""
        check = Checker(source, options)
        section = cls.parse(check, {cls.NAME: {k: v for k, v in values.items() if v is not None}})
        if check.problems:
            raise ConfigError("\n".join(check.problems))
        return section

    def with_values(self, values: dict[str, Any], options: dict[str, str]) -> Section:
        """This section with ``values`` (by key path, ``ray.workers``; other sections' left out)
        in place of its keys, checked as in a config; a problem names the option that gave the
        value (``options``: key path to option)."""
        prefix = f"{self.NAME}."
        given = {path.removeprefix(prefix): value for path, value in values.items()
                 if path.startswith(prefix)}
        return self.from_values(self.NAME, options, **{**self.to_config(), **given})

    @classmethod
    def resumable_keys(cls) -> tuple[str, ...]:
        return tuple(f"{cls.NAME}.{f.name}" for f in fields(cls) if f.metadata["resumable"])
