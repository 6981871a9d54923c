"""How a job was asked for, as plain values: which command (``run`` or ``resume``), its config,
and the options that change where or how the run goes. A job's messages repeat them in the
commands they tell a user to run (resume it, start it again, play it on Ray), whether the job came
from the command line or from Python.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tuner import commands
from tuner.config import RunConfig, load_config

RUN, RESUME = "run", "resume"
# The config keys a job's options set, and how a message names each when Python gave it.
WORKERS, ADDRESS = "ray.workers", "ray.address"
PYTHON_NAMES = {WORKERS: "workers", ADDRESS: "address"}


@dataclass(frozen=True)
class Launch:
    """A job's command and options. ``config``: the config file a run starts from, or the edited
    config a resume was given (None: none). ``names``: how a refusal of an option's value names
    the option (``--workers`` on the command line, ``workers`` from Python)."""

    command: str
    config: str | None = None
    overwrite: bool = False
    family_changed: bool = False
    workers: int | None = None
    address: str | None = None
    names: Mapping[str, str] = field(default_factory=lambda: dict(PYTHON_NAMES))

    @classmethod
    def of(cls, command: str, config: str | os.PathLike | None, **options) -> Launch:
        """A launch whose config is given as a path (kept as given: messages repeat it)."""
        return cls(command, None if config is None else os.fspath(config), **options)

    def load(self) -> RunConfig:
        """The run's config file read, with the options in place of its keys."""
        return self.apply(load_config(self.config))

    def apply(self, config: RunConfig) -> RunConfig:
        """``config`` with ``workers`` and ``address`` in place of its Ray keys, read again by
        every check of a config: a bad value is refused naming the option (``ConfigError``)."""
        given = {key: value for key, value in ((WORKERS, self.workers), (ADDRESS, self.address))
                 if value is not None}
        return config.with_values(given, dict(self.names))

    def resume_options(self, address: str | None = None) -> dict:
        """What a resume takes of this job's options (``tuner.commands.resume``'s keywords): an
        edited config and ``--family-changed`` (a resume's), ``--workers`` and ``--address``
        (``address`` in place of the one given)."""
        edited = self.command == RESUME
        return {"config": self.config if edited else None,
                "family_changed": edited and self.family_changed,
                "workers": self.workers, "address": address or self.address}

    def kept_options(self) -> dict:
        """``resume_options`` as the run's ``status.json`` keeps them for ``tune status`` and
        ``tune stop``, which may run in another folder: an edited config's path absolute."""
        options = self.resume_options()
        if options["config"]:
            options["config"] = os.path.abspath(options["config"])
        return options

    def resume_command(self, run_dir: Path, address: str | None = None) -> str:
        """``tune resume RUN_DIR`` with ``resume_options``."""
        return commands.resume(run_dir, **self.resume_options(address))

    def start_again(self, run_dir: Path, address: str | None = None) -> str:
        """The command that starts again a run that has no checkpoint yet: the same command
        (``address`` in place of the one given)."""
        if self.command == RUN:
            overwrite = ["--overwrite"] if self.overwrite else []
            return commands.tune(RUN, self.config, *overwrite, *self._ray_options(address))
        return self.resume_command(run_dir, address)

    def on_ray(self, run_dir: Path, workers: int) -> str:
        """This command with ``--workers``: the same run, its games played on Ray (a new run
        replaces the one this command makes: ``--overwrite``)."""
        if self.command == RUN:
            return commands.tune(RUN, self.config, "--overwrite", "--workers", str(workers))
        return dataclasses.replace(self, workers=workers).resume_command(run_dir)

    def _ray_options(self, address: str | None = None) -> list:
        given = {"workers": self.workers, "address": address or self.address}
        return [word for name, value in given.items() if value is not None
                for word in (f"--{name}", value)]
