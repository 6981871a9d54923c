"""engine.atomic: atomic writes with the usual file mode, and a cleanup that spares users' files."""

import os
import stat
from pathlib import Path

import pytest

from engine import atomic
from engine.atomic import atomic_write, is_temp_file, remove_stale_temp_files


@pytest.fixture
def umask():
    """Set the process umask for one test, restoring it afterwards."""
    saved = os.umask(0o022)
    try:
        yield os.umask
    finally:
        os.umask(saved)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_the_written_file_has_the_mode_of_a_plain_open(tmp_path, umask, mask, mode):
    umask(mask)
    atomic_write(tmp_path / "new.yaml", "a: 1\n")
    with open(tmp_path / "plain.yaml", "w") as handle:
        handle.write("a: 1\n")
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == mode
    assert stat.S_IMODE((tmp_path / "plain.yaml").stat().st_mode) == mode


def test_replacing_a_file_gives_it_the_umask_mode(tmp_path, umask):
    path = tmp_path / "best.yaml"
    path.write_text("old\n")
    path.chmod(0o600)
    atomic_write(path, b"new\n")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o644


def test_the_temporary_file_has_a_name_only_atomic_write_makes(tmp_path, monkeypatch):
    renamed = []
    real_replace = os.replace

    def spying_replace(src, dst):
        renamed.append(Path(src).name)
        real_replace(src, dst)

    monkeypatch.setattr(atomic.os, "replace", spying_replace)
    atomic_write(tmp_path / "best.yaml", "a: 1\n")
    [name] = renamed
    assert name.startswith(".best.yaml.tune2048-tmp-")
    assert is_temp_file(name)
    assert os.listdir(tmp_path) == ["best.yaml"]


def test_a_failed_write_leaves_no_temporary_file(tmp_path, monkeypatch):
    def failing_replace(src, dst):
        raise OSError("disk on fire")

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk on fire"):
        atomic_write(tmp_path / "best.yaml", "a: 1\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("name", "ours"),
    [
        (".best.yaml.tune2048-tmp-abc123", True),
        (".checkpoint.pkl.tune2048-tmp-k3_9zq1a", True),
        (".notes.tmp", False),  # a user's own hidden file: removed by the old ".*.tmp" glob
        (".checkpoint.pkl.x1y2z3.tmp", False),  # the old naming
        ("best.yaml.tune2048-tmp-abc123", False),  # not hidden
        (".best.yaml.tune2048-tmp-", False),  # no random part
        (".best.yaml.tune2048-tmp-abc123.bak", False),  # a user's copy
        (".tune2048-tmp-abc123", False),  # no target name
    ],
)
def test_is_temp_file(name, ours):
    assert is_temp_file(name) is ours


def test_cleanup_removes_only_stale_temporary_files_of_atomic_write(tmp_path):
    keep = [".notes.tmp", ".best.yaml.tmp", "best.yaml", ".best.yaml.tune2048-tmp-abc123.bak"]
    stale = [".best.yaml.tune2048-tmp-abc123", ".checkpoint.pkl.tune2048-tmp-zz_9x0q1"]
    for name in keep + stale:
        (tmp_path / name).write_text("x")
    (tmp_path / ".run.log.tune2048-tmp-dir0").mkdir()  # not a file: not ours either

    removed = remove_stale_temp_files(tmp_path)

    assert removed == sorted(tmp_path / name for name in stale)
    assert sorted(os.listdir(tmp_path)) == sorted([*keep, ".run.log.tune2048-tmp-dir0"])
