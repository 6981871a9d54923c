"""The one seam for a run's files: what the tuning loop writes and reads goes through a
``RunStore``, so that the loop never names a path.

``DirectoryStore`` is a run directory on disk (the files of ``tuner.store.checkpoint``, the stop
request, locks and staging of ``tuner.store.run_dir``): ``DirectoryStore.new`` starts a run in a
staging directory that takes the run directory's place once its first checkpoint is written (what
``--overwrite`` relies on), ``DirectoryStore.existing`` locks a run to resume it; ``close`` lets
go of both, and removes a new run that never wrote a checkpoint.
``MemoryStore`` is its twin in memory, with the same bytes, for benchmarks and unit tests that
drive runs without a disk.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from engine.atomic import atomic_write, check_untracked, remove_stale_temp_files
from engine.weights_file import WeightsFile, weights_text, write_weights
from tuner.config import stored_text
from tuner.store import checkpoint as ckpt
from tuner.store.checkpoint import RunState
from tuner.store.run_dir import Lock, NewRun, clear_stop_request, resume_a_copy


class RunStore(Protocol):
    """Where a run keeps its config, checkpoint, history, cluster figures, best weights and
    validation table, and where ``tune stop`` leaves its request."""

    @property
    def checkpointed(self) -> bool:
        """Whether a checkpoint of this run has been written (a resume can go on from it)."""

    @property
    def location(self) -> Path:
        """The run directory, for messages (a memory store names a directory it never writes)."""

    def prepare(self) -> list[Path]:
        """Fail before any compute if the store cannot be written; the stale temporary files it
        removed (left by a write that was interrupted)."""

    def write_config(self, resolved: dict[str, Any]) -> None: ...

    def save_state(self, state: RunState) -> None:
        """The checkpoint, with its history and cluster views; the first one settles a staged
        run into its place. The kept games are emptied: the checkpoint holds them."""

    def write_best(self, weights: WeightsFile) -> None: ...

    def write_validation(self, table: str) -> None: ...

    def kept_games(self) -> str:
        """The games kept since the last checkpoint (``tuner.games.kept``), as written; empty
        where there are none."""

    def keep_games(self, text: str, start: bool = False) -> None:
        """Append ``text`` to the kept games (``start``: in place of them); the next
        checkpoint empties them."""

    @property
    def kept_games_name(self) -> str:
        """Where the kept games are, for messages."""

    def write_status(self, text: str) -> None:
        """``status.json``: where the job stands (``tuner.store.status_file``); no result reads
        it."""

    def take_stop_request(self) -> bool:
        """Whether ``tune stop`` asked this job to stop since the store was opened (a request
        left by an earlier job is removed when the store takes the directory); the request is
        taken, so it stops one job only."""


class DirectoryStore:
    """A run directory. ``place``: called once the first checkpoint is written, it moves a
    staged run to its final directory and returns it (``tuner.store.run_dir.NewRun``)."""

    def __init__(self, directory: Path, place: Callable[[], Path] | None = None):
        self.directory = directory
        self._place = place
        self._checkpointed = place is None and (directory / ckpt.CHECKPOINT_FILE).exists()
        self._new_run: NewRun | None = None
        self._lock: Lock | None = None
        self.resume: Mapping | None = None  # the job's resume options, for the hints it prints

    @classmethod
    def new(cls, run_dir: Path, overwrite: bool, same_config: bool,
            resume: Mapping | None = None) -> DirectoryStore:
        """A fresh run for ``run_dir``, staged beside it and locked (``run_dir.NewRun``:
        ``CheckpointError`` where ``run_dir`` holds what may not be replaced). The staging
        directory starts empty, so a stop request found there later is this job's.
        ``resume``: the job's options that a resume takes (``tuner.commands.resume``), for the
        commands a refusal prints."""
        new_run = NewRun(run_dir, overwrite, same_config, resume)
        store = cls(new_run.staging, new_run.take_place)
        store._new_run = new_run
        return store

    @classmethod
    def existing(cls, run_dir: Path, resume: Mapping | None = None) -> DirectoryStore:
        """The run in ``run_dir``, locked against a second ``tune`` working in it; a stop
        request left by an earlier job is removed, and one made from now on is this job's.
        ``resume``: as ``new``'s."""
        lock = Lock(run_dir)
        try:
            clear_stop_request(run_dir)
        except BaseException:
            lock.release()
            raise
        store = cls(run_dir)
        store._lock = lock
        store.resume = resume
        return store

    @property
    def log_file(self) -> Path:
        """``run.log``: the run's lines, as the terminal shows them."""
        return self.directory / ckpt.LOG_FILE

    def close(self) -> None:
        """Let go of the locks; a new run that wrote no checkpoint leaves nothing behind but
        the games it kept (``tuner.games.kept``), which the next start of it takes up."""
        if self._new_run is not None:
            if not self._checkpointed:
                self._new_run.abandon(keep=ckpt.KEPT_GAMES_FILE if self.kept_games() else None)
            self._new_run.release()
            self._new_run = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    @property
    def checkpointed(self) -> bool:
        return self._checkpointed

    @property
    def location(self) -> Path:
        return self.directory

    def prepare(self) -> list[Path]:
        ckpt.check_writable(self.directory)
        # a run committed between sessions is never rewritten in place (nor its run.log, which
        # is appended to)
        check_untracked(self.directory, resume_a_copy(self.directory, self.resume))
        return remove_stale_temp_files(self.directory)

    def write_config(self, resolved: dict[str, Any]) -> None:
        ckpt.write_config(self.directory, resolved)

    def save_state(self, state: RunState) -> None:
        ckpt.save_state(self.directory, state)
        (self.directory / ckpt.KEPT_GAMES_FILE).unlink(missing_ok=True)
        if self._place is not None:
            self.directory = self._place()
            self._place = None
        self._checkpointed = True

    def write_best(self, weights: WeightsFile) -> None:
        write_weights(self.directory / ckpt.BEST_FILE, weights)

    def write_validation(self, table: str) -> None:
        atomic_write(self.directory / ckpt.VALIDATION_FILE, table)

    def kept_games(self) -> str:
        try:
            return (self.directory / ckpt.KEPT_GAMES_FILE).read_text(encoding="utf-8",
                                                                   errors="replace")
        except FileNotFoundError:
            return ""

    def keep_games(self, text: str, start: bool = False) -> None:
        # appended, not rewritten: a killed process cuts short at most its last line, which
        # the reader leaves out (``tuner.games.kept``); no fsync, a process's end is what this
        # is for (a machine's crash loses what its disk had not written)
        with open(self.directory / ckpt.KEPT_GAMES_FILE, "w" if start else "a",
                  encoding="utf-8") as file:
            file.write(text)

    @property
    def kept_games_name(self) -> str:
        return str(self.directory / ckpt.KEPT_GAMES_FILE)

    def write_status(self, text: str) -> None:
        atomic_write(self.directory / ckpt.STATUS_FILE, text)

    def take_stop_request(self) -> bool:
        try:
            (self.directory / ckpt.STOP_FILE).unlink()
        except FileNotFoundError:
            return False
        return True


class MemoryStore:
    """A run directory's files as bytes in ``files``, written exactly as ``DirectoryStore``
    writes them (weights files are checked by their reader first, as on disk); ``stop()`` is
    ``tune stop``."""

    def __init__(self, location: Path = Path("memory")):
        self._location = location
        self.files: dict[str, bytes] = {}
        self._stop = False

    @property
    def checkpointed(self) -> bool:
        return ckpt.CHECKPOINT_FILE in self.files

    @property
    def location(self) -> Path:
        return self._location

    def prepare(self) -> list[Path]:
        return []

    def write_config(self, resolved: dict[str, Any]) -> None:
        self.files[ckpt.CONFIG_FILE] = stored_text(resolved).encode()

    def save_state(self, state: RunState) -> None:
        self.files[ckpt.HISTORY_FILE] = ckpt.rows_csv(state.history).encode()
        if state.cluster:
            self.files[ckpt.CLUSTER_FILE] = ckpt.rows_csv(list(state.cluster)).encode()
        self.files[ckpt.CHECKPOINT_FILE] = ckpt.encode_state(state)
        self.files.pop(ckpt.KEPT_GAMES_FILE, None)

    def write_best(self, weights: WeightsFile) -> None:
        self.files[ckpt.BEST_FILE] = weights_text(self._location / ckpt.BEST_FILE,
                                                  weights).encode()

    def write_validation(self, table: str) -> None:
        self.files[ckpt.VALIDATION_FILE] = table.encode()

    def kept_games(self) -> str:
        return self.files.get(ckpt.KEPT_GAMES_FILE, b"").decode(errors="replace")

    def keep_games(self, text: str, start: bool = False) -> None:
        kept = b"" if start else self.files.get(ckpt.KEPT_GAMES_FILE, b"")
        self.files[ckpt.KEPT_GAMES_FILE] = kept + text.encode()

    @property
    def kept_games_name(self) -> str:
        return str(self._location / ckpt.KEPT_GAMES_FILE)

    def write_status(self, text: str) -> None:
        self.files[ckpt.STATUS_FILE] = text.encode()

    def stop(self) -> None:
        self._stop = True

    def take_stop_request(self) -> bool:
        stop, self._stop = self._stop, False
        return stop

    def state(self) -> RunState:
        """The last checkpoint, decoded as a resume would read it."""
        return ckpt.decode_state(self.files[ckpt.CHECKPOINT_FILE], Path(ckpt.CHECKPOINT_FILE))
