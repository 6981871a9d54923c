"""The tuner's Python API (docs/api.md): what ``tune run``, ``tune resume`` and ``tune stop`` do,
called from Python with the same files, lines and outcomes; a run's results read back; and ask
and tell, for a caller who plays the games. The command line is a thin parser over it.

    >>> from tuner.api import open_run, run
    >>> outcome = run("configs/quick.yaml")
    >>> open_run(outcome.run_dir).best.weights

The names in ``__all__`` are a contract, stable from tune2048 0.4.0 on. Each is imported on first
use, so that importing this package (as the command line does to read its arguments) loads
neither numpy nor the engine.
"""

import importlib

_EXPORTS = {
    "AskTell": "tuner.api.ask_tell",
    "Candidates": "tuner.api.ask_tell",
    "Fitness": "tuner.games.fitness",
    "GenerationRecord": "tuner.loop.record",
    "Observer": "tuner.loop.observers",
    "Outcome": "tuner.api.job",
    "RunResults": "tuner.api.results",
    "open_run": "tuner.api.results",
    "resume": "tuner.api.resumed",
    "run": "tuner.api.job",
    "stop": "tuner.api.job",
}

__all__ = [
    "AskTell",
    "Candidates",
    "Fitness",
    "GenerationRecord",
    "Observer",
    "Outcome",
    "RunResults",
    "open_run",
    "resume",
    "run",
    "stop",
]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'tuner.api' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
