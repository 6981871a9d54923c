"""A run directory's life: what a directory holds, the lock that keeps a second ``tune`` out of
it, and a new run that takes its place only once it has a checkpoint.

A new run is written in a staging directory beside its run directory (``.NAME.new``) and renamed
into place when its first generation's checkpoint is written. Until then nothing exists at the
run directory's path, or the run that was there (``--overwrite``) is intact; a run that fails or
is interrupted before its first checkpoint leaves nothing behind but the games it played, kept in
its staging directory (``tuner.games.kept``), which the next start of the run takes up. A
directory that holds results without a checkpoint (a shipped or copied result) is never
replaced, nor one holding files that are not a run's, nor one holding a file that git tracks
(``engine.atomic.check_untracked``): a run committed between sessions is resumed from a copy
(``resume_a_copy``).

The lock is ``flock`` on the directory itself, so taking it writes nothing; the process that
holds it is found in ``/proc/locks`` to name it in the refusal.
"""

from __future__ import annotations

import contextlib
import enum
import fcntl
import os
import shlex
import shutil
from collections.abc import Mapping
from pathlib import Path

from engine.atomic import atomic_write, check_untracked, is_temp_file, unused_path
from tuner import commands
from tuner.errors import CheckpointError
from tuner.store import checkpoint as ckpt

STAGING_SUFFIX = ".new"
RETIRED_SUFFIX = ".old"
# What a run writes; a run stopped before its first checkpoint holds only these.
STARTED_FILES = {ckpt.CONFIG_FILE, ckpt.LOG_FILE, ckpt.STATUS_FILE}
RUN_FILES = STARTED_FILES | {ckpt.CHECKPOINT_FILE, ckpt.HISTORY_FILE, ckpt.CLUSTER_FILE,
                             ckpt.BEST_FILE, ckpt.VALIDATION_FILE, ckpt.STOP_FILE,
                             ckpt.KEPT_GAMES_FILE, "convergence.png"}
START_ELSEWHERE = "pick another run.name or run.output_dir in the config"


class Holds(enum.Enum):
    """What a path holds, for a new run that would go there."""

    NOTHING = "nothing"  # missing, or an empty directory
    STARTED = "a run stopped before its first checkpoint"
    RUN = "a run"  # it has a checkpoint: resumable, replaceable with --overwrite
    RESULTS = "results without a checkpoint"  # shipped or copied: never replaced
    OTHER = "files that are not a run's"


def holds(path: Path) -> Holds:
    """What ``path`` holds; ``CheckpointError`` if it is not a directory or cannot be read."""
    if not path.exists() and not path.is_symlink():
        return Holds.NOTHING
    if not path.is_dir():
        raise CheckpointError(f"{path}: exists and is not a directory")
    try:
        names = {p.name for p in path.iterdir() if not is_temp_file(p)}
    except OSError as err:
        raise CheckpointError(f"{path}: cannot read: {err.strerror}") from None
    if not names:
        return Holds.NOTHING
    if not names <= RUN_FILES:
        return Holds.OTHER
    if ckpt.CHECKPOINT_FILE in names:
        return Holds.RUN
    return Holds.STARTED if names <= STARTED_FILES else Holds.RESULTS


def resume_a_copy(run_dir: Path, resume: Mapping | None = None) -> str:
    """How to go on with a run whose files git tracks (a campaign committed between sessions),
    which tune never rewrites: resume a copy in outputs/, which git ignores (``resume``: the
    job's options that a resume takes, ``tuner.commands.resume``'s keywords)."""
    copy = str(unused_path(Path("outputs") / run_dir.resolve().name))
    return (f"to go on with the run, resume a copy of it: mkdir -p outputs && "
            f"{shlex.join(['cp', '-r', str(run_dir), copy])} && "
            f"{commands.resume(copy, **(resume or {}))}")


def staging_path(run_dir: Path) -> Path:
    """Where a new run for ``run_dir`` is written until its first checkpoint."""
    return run_dir.with_name(f".{run_dir.name}{STAGING_SUFFIX}")


class Lock:
    """An exclusive lock on a directory for as long as this process works in it.

    ``CheckpointError`` when another process holds it, naming that process where ``/proc/locks``
    tells. The lock moves with the directory when it is renamed (it is held on the directory's
    inode), and ends with the process whatever happens to it.
    """

    def __init__(self, directory: Path, named: Path | None = None):
        """``named``: the run directory a refusal names, when ``directory`` is its staging
        directory (a run being started there has no checkpoint yet)."""
        self.directory = directory
        self._fd = None
        try:
            self._fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as err:
            raise CheckpointError(f"{directory}: cannot open: {err.strerror}") from None
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_holder(self._fd)
            os.close(self._fd)
            self._fd = None
            who = f"tune process {holder}" if holder else "another tune process"
            if named is not None:
                raise CheckpointError(
                    f"{named}: a run is being started there by {who} (in {directory}, until "
                    f"its first checkpoint): wait for it to finish, or stop it (kill -INT "
                    f"{holder or 'PID'}), then try again") from None
            raise CheckpointError(
                f"{directory}: in use by {who}: wait for it to finish, or stop it "
                f"(kill -INT {holder or 'PID'}; it checkpoints), then try again"
            ) from None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the last descriptor releases the flock
            self._fd = None


def request_stop(run_dir: Path) -> tuple[Path, int | None]:
    """Ask the ``tune`` process that works in ``run_dir`` (or in its staging directory, before
    its first checkpoint) to stop after its current generation: a stop file there, which the
    run reads between generations. The directory written to and the process, where known.

    ``run_dir`` may be given any way a shell gives it: ``.`` from inside the run directory,
    ``..``, with a trailing slash. The staging directory is looked at first: while a run is
    being started there, the run directory (an old run that ``--overwrite`` replaces) is locked
    by the same process but retired at the first checkpoint, with whatever was written there.

    ``CheckpointError`` when ``run_dir`` is not a directory, or no process works there: there
    is nothing to stop."""
    try:
        where = Path(os.path.abspath(run_dir))  # ".", ".." and "a/.." name the directory itself
    except FileNotFoundError:  # the working directory was removed (a run replaced it, say)
        raise CheckpointError(f"{run_dir}: the working directory no longer exists") from None
    if where.exists() and not where.is_dir():
        raise CheckpointError(f"{run_dir}: is not a directory: expected the directory of a "
                              "running run")
    places = [where] if where == where.parent else [staging_path(where), where]  # "/": no name
    for directory in places:
        if not ckpt.is_directory(directory):  # a staging name may be too long for a file system
            continue
        held, holder = _held(directory)
        if not held:
            continue
        try:
            atomic_write(directory / ckpt.STOP_FILE,
                         f"stop requested by process {os.getpid()}\n")
        except FileNotFoundError:  # the staged run took its place just now
            return request_stop(run_dir)
        return directory, holder
    if not where.is_dir():
        raise CheckpointError(f"{run_dir}: no such run directory")
    raise CheckpointError(f"{run_dir}: no tune process is running this run: nothing to stop")


def clear_stop_request(directory: Path) -> None:
    """Remove a stop request left in ``directory`` by an earlier job. Called once the lock is
    taken: a request is written only while a process holds the lock, so one found then was made
    for a process that has gone, and one made from now on is this job's."""
    with contextlib.suppress(FileNotFoundError):
        (directory / ckpt.STOP_FILE).unlink()


def _held(directory: Path) -> tuple[bool, int | None]:
    """Whether another process holds ``directory``'s lock, and which one where ``/proc/locks``
    tells; taking it to find out releases it at once."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as err:
        raise CheckpointError(f"{directory}: cannot open: {err.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True, _lock_holder(fd)
    finally:
        os.close(fd)  # closing the only descriptor releases a lock taken here
    return False, None


def _lock_holder(fd: int) -> int | None:
    """The pid holding a flock on the file open at ``fd``, from /proc/locks (Linux)."""
    stat = os.fstat(fd)
    wanted = f"{os.major(stat.st_dev):02x}:{os.minor(stat.st_dev):02x}:{stat.st_ino}"
    try:
        lines = Path("/proc/locks").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) > 5 and fields[1] == "FLOCK" and fields[5] == wanted:
            with contextlib.suppress(ValueError):
                return int(fields[4])
    return None


class NewRun:
    """The directories of a run being started: its staging directory, locked and empty, and the
    run directory it will take the place of (locked too if it exists).

    ``replace`` is what the caller allows at ``run_dir``: a run (``--overwrite``), or a run
    stopped before its first checkpoint, which has nothing to lose. ``resume``: the job's options
    that a resume takes, for the command a refusal prints (``tuner.commands.resume``).
    """

    def __init__(self, run_dir: Path, overwrite: bool, same_config: bool,
                 resume: Mapping | None = None):
        self.run_dir = run_dir
        self.staging = staging_path(run_dir)
        self._locks: list[Lock] = []
        self._created = _missing_ancestors(run_dir.parent)  # removed again if the run fails
        made = False
        try:
            found = holds(run_dir)
            # The locks first: a directory another `tune` works in is named as such, not as
            # one that holds a run.
            if run_dir.is_dir() and not run_dir.is_symlink():
                self._locks.append(Lock(run_dir))
            if self.staging.is_dir() and not self.staging.is_symlink():
                self._locks.append(Lock(self.staging, named=run_dir))
            if found is Holds.RESULTS or found is Holds.OTHER:
                raise CheckpointError(
                    f"{run_dir}: holds {found.value}, which tune never replaces: {START_ELSEWHERE}")
            # a campaign committed between sessions: neither replaced nor resumed in place
            instead = START_ELSEWHERE
            if found is Holds.RUN:
                instead = (f"{resume_a_copy(run_dir, resume)}; or to start afresh, "
                           f"{START_ELSEWHERE}")
            check_untracked(run_dir, instead)
            check_untracked(self.staging)  # emptied below
            if found is Holds.RUN and not overwrite:
                hint = (f"resume it with: {commands.resume(run_dir, **(resume or {}))}"
                        if same_config else
                        "pick another run.name or run.output_dir, or pass --overwrite to "
                        "replace it once the new run has written its first checkpoint")
                raise CheckpointError(f"{run_dir}: already holds a run; {hint}")
            if found is Holds.STARTED and not (same_config or overwrite):
                raise CheckpointError(
                    f"{run_dir}: holds another run stopped before its first checkpoint; pick "
                    "another run.name or run.output_dir, or pass --overwrite to replace it")
            staged = any(lock.directory == self.staging for lock in self._locks)
            made = not staged and not self.staging.exists()
            ckpt.check_writable(self.staging, staged_for=run_dir)
            if not staged:
                self._locks.append(Lock(self.staging, named=run_dir))
            # left by a process that died before its first checkpoint; the games it kept are
            # this run's if it plays them (``tuner.games.kept``)
            _empty(self.staging, ckpt.KEPT_GAMES_FILE)
        except BaseException:
            if made:
                with contextlib.suppress(OSError):
                    self.staging.rmdir()  # made here and still empty
            self.release()
            self._remove_created()
            raise

    def take_place(self) -> Path:
        """Rename the staging directory to the run directory, retiring what was there; the
        locks move with the directories. Returns the run directory."""
        retired = self.run_dir.with_name(f".{self.run_dir.name}{RETIRED_SUFFIX}")
        if self.run_dir.exists():
            shutil.rmtree(retired, ignore_errors=True)
            os.rename(self.run_dir, retired)
        os.rename(self.staging, self.run_dir)
        shutil.rmtree(retired, ignore_errors=True)
        _fsync_directory(self.run_dir.parent)
        return self.run_dir

    def abandon(self, keep: str | None = None) -> None:
        """The run stopped before its first checkpoint: remove the staging directory, and the
        folders made for it that are still empty; ``keep``: a file of it to leave, alone in
        it, for the next start of the run (its kept games)."""
        if keep is not None:
            _empty(self.staging, keep)
            return
        shutil.rmtree(self.staging, ignore_errors=True)
        self._remove_created()

    def _remove_created(self) -> None:
        for folder in self._created:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if empty

    def release(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks.clear()


def _missing_ancestors(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def _empty(directory: Path, keep: str | None = None) -> None:
    """Remove everything in ``directory`` but a regular file named ``keep``."""
    for path in directory.iterdir():
        if path.name == keep and path.is_file() and not path.is_symlink():
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def _fsync_directory(directory: Path) -> None:
    """Make the renames durable."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
