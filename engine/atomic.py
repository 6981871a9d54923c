"""Atomic file writes: a reader sees the old complete file or the new complete file, never a mix.

The temporary file is named ``.{name}.tune2048-tmp-XXXXXXXX`` beside the target: a name only
this writer makes, so cleaning up after a killed write never touches a user's own files.

``check_target`` is the one rule for the paths tune writes (``--output``, ``--plot``, a run's
files): a regular file, which is replaced whole, or a path that does not exist yet, in a
directory that exists and can be written. A device, a FIFO, a socket, a directory or a symbolic
link is refused, since renaming a file over it would replace it (``/dev/null`` itself, or the
link instead of the file it points to) (``check_kind``); ``atomic_write`` applies the rule
before it writes.

Nothing committed is ever overwritten: an existing file that git tracks is refused too
(``check_untracked``), whatever command would replace it. Only a path that exists is asked
about, and only inside a git work tree (a ``.git`` found up its parents), so a new file, or a
file outside any checkout, costs a stat; a file that is replaced costs one ``git ls-files``
(a few milliseconds, a handful per generation of a run). Inside a work tree where git cannot be
run (not installed, a repository it refuses), tune cannot tell a committed file from another,
and refuses to replace any existing file there.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from engine.errors import BadInput

TEMP_MARKER = ".tune2048-tmp-"
# tempfile's random part is drawn from lowercase letters, digits and "_".
_TEMP_NAME = re.compile(rf"\..+{re.escape(TEMP_MARKER)}[a-z0-9_]+")
_KINDS = ((stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
GIT_TIMEOUT = 10.0  # seconds for git to say which files it tracks
# What would point git at another repository than the one the path is in.
_GIT_LOCATION = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                 "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE", "GIT_PREFIX")


class UnwritableTarget(BadInput):
    """A path tune will not or cannot write a file at; the message names it and says why."""


class TrackedFile(UnwritableTarget):
    """A file that git tracks (or may track: git could not be asked), which tune never
    changes."""


def check_target(path: str | os.PathLike, hint: str = "", instead: str = "") -> None:
    """Refuse, in one line naming ``path``, a path that ``atomic_write`` must not or cannot
    write (``check_kind``), or a file that git tracks (``check_untracked``, whose message ends
    with ``instead``: what to run instead)."""
    check_kind(path, hint)
    check_untracked(path, instead)


def check_kind(path: str | os.PathLike, hint: str = "") -> None:
    """Refuse, in one line naming ``path``, anything but a regular file or a new name, or a
    name in a directory that is missing or cannot be written: what no file can be written at,
    committed or not. ``hint`` ends the message for a special file or a link (e.g. how to
    write to standard output instead)."""
    target = Path(path)
    try:
        found = os.lstat(target)
    except (FileNotFoundError, NotADirectoryError):
        found = None  # the directory is checked below
    except OSError as err:  # ENAMETOOLONG, EACCES, ELOOP...
        raise UnwritableTarget(f"{target}: cannot write: {err.strerror}") from None
    if found is not None and stat.S_ISLNK(found.st_mode):
        link = os.readlink(target)
        dangling = "" if target.exists() else ", which does not exist"
        raise UnwritableTarget(
            f"{target}: cannot write: it is a symbolic link (to {link}{dangling}), and tune "
            f"replaces a file whole, which would replace the link: give the file's own path"
            f"{hint}")
    if found is not None and not stat.S_ISREG(found.st_mode):
        kind = next((name for test, name in _KINDS if test(found.st_mode)), "not a regular file")
        raise UnwritableTarget(f"{target}: cannot write: it is {kind}, and tune writes regular "
                               f"files only, replacing them whole"
                               f"{'' if stat.S_ISDIR(found.st_mode) else hint}")
    problem = directory_problem(target.parent)
    if problem:
        raise UnwritableTarget(f"{target}: cannot write: {problem}")


def check_untracked(path: str | os.PathLike, instead: str = "") -> None:
    """Refuse ``path`` if git tracks it or, for a directory, any file under it: replacing,
    removing or renaming it would change a committed file. ``TrackedFile`` names the first
    such file, and ends with ``instead`` (what to run instead) where given. A path that does
    not exist, or is outside any git work tree, passes without asking git."""
    target = Path(path)
    if not os.path.lexists(target):
        return  # a new file is never tracked: no need to ask git
    real = target.resolve()
    top = work_tree(real)
    if top is None:
        return
    then = f"; {instead}" if instead else ""
    try:
        tracked = _tracked_by_git(top, real)
    except _GitFailed as failed:
        raise TrackedFile(f"{target}: cannot tell whether git tracks it ({failed}), and tune "
                          f"never changes a committed file{then}") from None
    if tracked:
        shown = target / tracked[0].relative_to(real) if tracked[0] != real else target
        raise TrackedFile(f"{shown}: git tracks this file, and tune never changes a committed "
                          f"file{then}")


def work_tree(path: Path) -> Path | None:
    """The top of the git work tree that holds ``path`` (an absolute path): the nearest
    folder, ``path`` itself included, with a ``.git`` (a directory, or a file in a linked
    work tree or a submodule); None outside any."""
    for folder in (path, *path.parents):
        if os.path.lexists(folder / ".git"):
            return folder
    return None


class _GitFailed(Exception):
    """git could not say which files it tracks; the message says why."""


def _tracked_by_git(top: Path, path: Path) -> list[Path]:
    """The files under ``top``'s git that are ``path`` or under it, as absolute paths."""
    relative = path.relative_to(top).as_posix()
    environment = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION}
    try:
        listed = subprocess.run(
            ["git", "--literal-pathspecs", "ls-files", "-z", "--", relative], cwd=top,
            env=environment, capture_output=True, timeout=GIT_TIMEOUT, check=False)
    except FileNotFoundError:
        raise _GitFailed("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise _GitFailed(f"git gave no answer within {GIT_TIMEOUT:g} s") from None
    except OSError as err:
        raise _GitFailed(f"git cannot be run: {err.strerror}") from None
    if listed.returncode != 0:
        said = listed.stderr.decode(errors="replace").strip().splitlines()
        raise _GitFailed(f"git says: {said[0] if said else f'exit status {listed.returncode}'}")
    return [top / os.fsdecode(name) for name in listed.stdout.split(b"\0") if name]


def unused_path(path: str | os.PathLike) -> Path:
    """``path`` if nothing is there, else the first of NAME-2.EXT, NAME-3.EXT... beside it that
    is free: a place to suggest writing to, since a new file is never committed nor anyone's."""
    wanted = Path(path)
    found, number = wanted, 1
    while os.path.lexists(found):
        number += 1
        found = wanted.with_name(f"{wanted.stem}-{number}{wanted.suffix}")
    return found


def directory_problem(directory: Path) -> str | None:
    """Why no file can be made in ``directory`` (missing, a file, not writable); None if one
    can."""
    if directory.is_dir():
        if not os.access(directory, os.W_OK | os.X_OK):
            return f"the directory {directory} is not writable"
        return None
    ancestor = directory
    while not ancestor.exists() and not ancestor.is_symlink() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if ancestor.exists() and not ancestor.is_dir():
        return f"{ancestor} is a file, not a directory"
    return f"no such directory: {directory}"


def atomic_write(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to a temporary file beside ``path``, flush it to disk, then rename it over.

    The file gets the mode a plain ``open`` would give it (``0o666`` less the umask), not the
    ``0o600`` of ``tempfile.mkstemp``. ``UnwritableTarget`` for a path ``check_target``
    refuses; ``OSError`` when the write itself fails (a full disk): the file is then as it was.
    """
    check_target(path)
    tmp_name = _write_temp(Path(path), data)
    try:
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def atomic_write_all(files: Sequence[tuple[str | os.PathLike, bytes | str]]) -> None:
    """Write several files, none of them changed unless all could be written: each is written to
    its temporary file and flushed first, and only then are they renamed into place, one after
    another. A failure before the renames (a full disk) leaves every file as it was."""
    for path, _data in files:
        check_target(path)
    temps: list[str] = []
    try:
        for path, data in files:
            temps.append(_write_temp(Path(path), data))
        for tmp_name, (path, _data) in zip(temps, files):
            os.replace(tmp_name, path)
    except BaseException:
        for tmp_name in temps:
            Path(tmp_name).unlink(missing_ok=True)
        raise


def _write_temp(target: Path, data: bytes | str) -> str:
    """A flushed temporary file beside ``target`` holding ``data``; its name. Removed again if
    writing it fails."""
    payload = data.encode() if isinstance(data, str) else data
    try:
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}{TEMP_MARKER}")
    except OSError as err:  # named after the file asked for, not the temporary one
        raise OSError(err.errno, err.strerror, str(target)) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o666 & ~_umask())
    except OSError as err:  # a full disk: ENOSPC from the write, the flush or the fsync
        Path(tmp_name).unlink(missing_ok=True)
        raise OSError(err.errno, err.strerror, str(target)) from None
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return tmp_name


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
