"""Atomic file writes: a reader sees the old complete file or the new complete file, never a mix."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it over."""
    target = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=TEMP_SUFFIX
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def remove_stale_temp_files(directory: str | os.PathLike) -> list[Path]:
    """Delete temporary files left in ``directory`` by writes that a killed process never
    finished (the files they were replacing are intact); return what was removed."""
    stale = sorted(Path(directory).glob(f".*{TEMP_SUFFIX}"))
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
