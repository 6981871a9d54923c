"""A run's validation table read back (``validation.csv``): the winner, the start and a
baseline reference, and how far the winner is above each (``Gain``), for ``tune report``, its
plot and ``tuner.api.RunResults`` alike."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tuner.config.sections import START, reference_label

if TYPE_CHECKING:
    from tuner.games.fitness import Gain


def validation_parts(validation: list[dict],
                     config: dict) -> tuple[dict | None, dict | None, list[dict]]:
    """The rows of ``validation.csv`` by part: the start's (``validation.start``, or ``reference:
    start``), if the run validated it; a baseline's (``validation.reference``), if the run names
    one; and the candidates', which alone can win."""
    start = next((r for r in validation if r["candidate"] == START), None)
    reference = config.get("validation", {}).get("reference")
    label = reference_label(reference) if reference != START else None
    baseline = next((r for r in validation if label is not None and r["candidate"] == label),
                    None)
    return start, baseline, [r for r in validation if r is not start and r is not baseline]


def validated_winner(validation: list[dict], config: dict) -> dict | None:
    """The winner's row: the candidate of the highest validation fitness (the first of equals,
    as the run chose it); None before the run has validated."""
    contenders = validation_parts(validation, config)[2]
    return max(contenders, key=lambda r: r["fitness"]) if contenders else None


def gains(validation: list[dict], config: dict) -> list[Gain]:
    """How far the winner is above the start and a baseline, where the run validated them:
    paired over the same games where ``validation.csv`` keeps the winner's paired difference
    from the start (``vs_start``: a run of tune2048 0.4 or later), else from the rows' own
    standard errors."""
    # here only to keep start-up fast: the fitnesses' module loads numpy
    from tuner.games.fitness import Gain

    winner = validated_winner(validation, config)
    if winner is None:
        return []
    games = config.get("validation", {}).get("games")
    found = []
    for mark in validation_parts(validation, config)[:2]:
        if mark is None:
            continue
        paired = mark["candidate"] == START and isinstance(winner.get("vs_start"), float) \
            and isinstance(winner.get("vs_start_stderr"), float)
        if paired:
            value, stderr = winner["vs_start"], winner["vs_start_stderr"]
        else:
            value = winner["fitness"] - mark["fitness"]
            stderr = math.hypot(winner["fitness_stderr"], mark["fitness_stderr"])
        found.append(Gain(mark["candidate"], value, stderr, games, paired))
    return found
