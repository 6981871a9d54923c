"""Atomic file writes: a reader sees the old complete file or the new complete file, never a mix.

The temporary file is named ``.{name}.tune2048-tmp-XXXXXXXX`` beside the target: a name only
this writer makes, so cleaning up after a killed write never touches a user's own files.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

TEMP_MARKER = ".tune2048-tmp-"
# tempfile's random part is drawn from lowercase letters, digits and "_".
_TEMP_NAME = re.compile(rf"\..+{re.escape(TEMP_MARKER)}[a-z0-9_]+")


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it over.

    The file gets the mode a plain ``open`` would give it (``0o666`` less the umask), not the
    ``0o600`` of ``tempfile.mkstemp``.
    """
    target = Path(path)
    payload = data.encode() if isinstance(data, str) else data
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}{TEMP_MARKER}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_umask())
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def _umask() -> int:
    """The process umask, read from /proc on Linux; elsewhere set and restored, which races only
    with another thread changing the umask at the same moment."""
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def is_temp_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is named like a temporary file of ``atomic_write``."""
    return _TEMP_NAME.fullmatch(Path(path).name) is not None


def remove_stale_temp_files(directory: str | os.PathLike) -> list[Path]:
    """Delete temporary files left in ``directory`` by writes that a killed process never
    finished (the files they were replacing are intact); return what was removed.

    Only ``atomic_write``'s own names are touched: a user's ``.notes.tmp`` stays.
    """
    stale = sorted(p for p in Path(directory).glob(f".*{TEMP_MARKER}*")
                   if is_temp_file(p) and p.is_file())
    for path in stale:
        path.unlink(missing_ok=True)
    return stale
