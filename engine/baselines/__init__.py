"""Baseline weights from the design documents, shipped inside the package so that they can be
named wherever tune2048 is installed: ``tune play --weights classic-reference``. Each is a
weights file (see ``engine.weights_file``) named ``NAME.yaml`` in this directory."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

SUFFIX = ".yaml"


def baseline_names() -> list[str]:
    """The names of the shipped baselines, sorted."""
    return sorted(entry.name.removesuffix(SUFFIX) for entry in resources.files(__name__).iterdir()
                  if entry.name.endswith(SUFFIX))


def baseline_path(name: str) -> Path | None:
    """The file of the baseline called ``name``; None if there is none of that name."""
    if name not in baseline_names():
        return None
    return Path(str(resources.files(__name__).joinpath(name + SUFFIX)))
