"""A config's YAML text, both ways: reading a file into a document the one way every config is
read (a run's own ``config.yaml`` too), and writing a run's ``config.yaml`` so that it reads back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from engine import yaml_text
from engine.echo import shorten
from tuner.config.limits import MAX_CONFIG_BYTES
from tuner.errors import ConfigError


def read_document(path: str | os.PathLike) -> Any:
    """A YAML file's document, read the one way every config is read (a run's own
    ``config.yaml`` too): at most ``MAX_CONFIG_BYTES``, UTF-8, YAML 1.2 numbers. ``ConfigError``
    names the file and the line."""
    source = str(path)
    try:
        with Path(path).open("rb") as file:
            raw = file.read(MAX_CONFIG_BYTES + 1)  # never more: the path may be /dev/zero
    except OSError as err:
        raise ConfigError(f"{source}: cannot read config: {err.strerror}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{source}: not a config file (larger than "
                          f"{MAX_CONFIG_BYTES // 1024} KiB)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source}: not a config file (not UTF-8 text)") from None
    try:
        return yaml_text.load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise ConfigError(f"{source}: {where}: invalid YAML ({shorten(str(problem))})") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{source}: YAML: invalid YAML ({shorten(str(err))})") from None


def stored_text(resolved: dict[str, Any]) -> str:
    """A run's ``config.yaml``: its resolved config as YAML that ``read_document`` reads back."""
    return yaml_text.dump(resolved)
