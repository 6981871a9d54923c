"""Which tune2048 this process runs: its version (``pyproject.toml``'s, the one place it is set,
read through the installed metadata) and an identity of its code.

The same seed must play the same game on every Ray node, so a worker compares its code with the
driver's before it plays (``tuner.games.evaluation.play_unit``). A version number cannot tell
two checkouts of one version apart, nor a checkout edited since it was installed: the identity
is a SHA-256 over the relative paths and bytes of every module and data file of the ``engine``
and ``tuner`` packages, the same wherever the packages live.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shlex
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import unquote, urlparse

import engine

CODE_SUFFIXES = (".py", ".yaml")  # the modules, and the data shipped with them (the baselines)
SHORT = 12  # hex digits of the identity that messages show


@cache
def version() -> str:
    """The installed distribution's version; run from a checkout that pip never installed (its
    folder on ``PYTHONPATH``), the checkout's ``pyproject.toml``'s."""
    try:
        return importlib.metadata.version("tune2048")
    except importlib.metadata.PackageNotFoundError:
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        with open(pyproject, "rb") as file:
            return tomllib.load(file)["project"]["version"]


def digest_of(packages: Sequence[Path]) -> str:
    """SHA-256 over every code file of ``packages`` (directories), each named by its path from
    the folder holding its package: independent of that folder and of the order of the files."""
    files = sorted((f"{package.name}/{path.relative_to(package).as_posix()}", path)
                   for package in packages for path in package.rglob("*")
                   if path.suffix in CODE_SUFFIXES and path.is_file())
    total = hashlib.sha256()
    for name, path in files:
        total.update(f"{name}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n".encode())
    return total.hexdigest()


@dataclass(frozen=True)
class Code:
    """The tune2048 a process runs, and where: what a Ray task carries from the driver."""

    digest: str
    version: str
    host: str
    install: str  # the command that installs this code on another machine

    def describe(self) -> str:
        return f"({self.host}) runs tune2048 {self.version} of code {self.digest[:SHORT]}"


@cache
def code() -> Code:
    """This process's code, computed once (the first Ray task or game asks for it)."""
    packages = [Path(engine.__file__).parent, Path(__file__).parent]
    return Code(digest_of(packages), version(), os.uname().nodename, install_command())


def refusal(worker: Code, driver: Code) -> str:
    """Why a worker refuses the driver's games, and what to do."""
    return (f"a Ray node {worker.describe()}, this driver {driver.describe()}: install the "
            f"driver's code on every node ({driver.install})")


def install_command(extra: str | None = None) -> str:
    """``pip install`` of this code, with its optional ``extra`` (``plot``): its checkout where
    it runs from one, else what pip installed it from (a wheel, a folder), else the release of
    its version."""
    wanted = f"[{extra}]" if extra else ""
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").is_file():
        return shlex.join(["pip", "install", "-e", f"{root}{wanted}"])
    try:
        direct = json.loads(importlib.metadata.distribution("tune2048")
                            .read_text("direct_url.json") or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError):
        direct = {}
    url = urlparse(direct.get("url", ""))
    source = (f"{unquote(url.path)}{wanted}" if url.scheme == "file" else
              f"tune2048{wanted}=={version()}")
    return shlex.join(["pip", "install", source])
