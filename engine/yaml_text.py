"""YAML reading that takes ``1e-8`` for the number people mean.

PyYAML follows YAML 1.1, where a float needs a dot: ``1e-8`` loads as the string "1e-8" and only
``1.0e-8`` as a number. Log-scale boxes and small weights are full of such values, so every YAML
file tune2048 reads (configs, weights files, a run's stored config) goes through ``load``, which
adds YAML 1.2's exponent form to the safe loader.
"""

from __future__ import annotations

import re
from typing import Any

import yaml


class _Loader(yaml.SafeLoader):
    """The safe loader plus floats written with an exponent and no dot."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9]+[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def load(text: str) -> Any:
    """Parse one YAML document safely; raises ``yaml.YAMLError`` on invalid YAML."""
    return yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: safe
