"""engine.atomic: atomic writes with the usual file mode, a cleanup that spares users' files, and
no committed file ever replaced."""

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from engine import atomic
from engine.atomic import (
    TrackedFile,
    atomic_write,
    atomic_write_all,
    check_target,
    check_untracked,
    is_temp_file,
    remove_stale_temp_files,
    unused_path,
)


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


# ---- nothing committed is ever overwritten ------------------------------------------------------

GIT_IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}


@pytest.fixture
def checkout(tmp_path):
    """A git work tree with committed files, an untracked one and an ignored folder."""
    top = tmp_path / "repo"
    (top / "runs" / "shipped").mkdir(parents=True)
    (top / "runs" / "shipped" / "best.yaml").write_text("committed\n")
    (top / "runs" / "x").mkdir()
    (top / "runs" / "x" / "best.yaml").write_text("committed\n")
    (top / "outputs").mkdir()
    (top / "outputs" / "mine.yaml").write_text("ignored\n")
    (top / ".gitignore").write_text("outputs/\n")
    git = ["git", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q"], cwd=top, check=True)
    subprocess.run([*git, "add", "."], cwd=top, check=True)
    subprocess.run([*git, "commit", "-qm", "shipped"], cwd=top, check=True,
                   env={**os.environ, **GIT_IDENTITY})
    (top / "runs" / "notes.txt").write_text("untracked\n")
    return top


@pytest.mark.subprocess
def test_replacing_a_committed_file_is_refused_and_leaves_it(checkout):
    target = checkout / "runs" / "shipped" / "best.yaml"
    with pytest.raises(TrackedFile, match=rf"^{re.escape(str(target))}: git tracks this file, "
                                          r"and tune never changes a committed file$"):
        atomic_write(target, "new\n")  # every write goes through the rule
    with pytest.raises(TrackedFile, match=r"committed file; write x\.yaml instead$"):
        check_target(target, instead="write x.yaml instead")
    assert target.read_text() == "committed\n"
    assert sorted(os.listdir(target.parent)) == ["best.yaml"]


@pytest.mark.subprocess
def test_several_files_are_written_none_if_one_is_committed(checkout):
    target = checkout / "runs" / "shipped" / "best.yaml"
    with pytest.raises(TrackedFile):
        atomic_write_all([(checkout / "runs" / "new.yaml", "a\n"), (target, "b\n")])
    assert not (checkout / "runs" / "new.yaml").exists()
    assert target.read_text() == "committed\n"


@pytest.mark.parametrize("name", ["runs/notes.txt", "outputs/mine.yaml", "runs/new.yaml",
                                  "outputs/new.yaml"])
@pytest.mark.subprocess
def test_untracked_ignored_and_new_files_are_written(checkout, name):
    atomic_write(checkout / name, "written\n")
    assert (checkout / name).read_text() == "written\n"


@pytest.mark.subprocess
def test_a_path_with_glob_characters_is_asked_about_literally(checkout):
    (checkout / "runs" / "[x]").mkdir()
    (checkout / "runs" / "[x]" / "best.yaml").write_text("untracked\n")
    check_target(checkout / "runs" / "[x]" / "best.yaml")  # not the pattern matching runs/x


@pytest.mark.subprocess
def test_a_directory_holding_a_committed_file_is_refused_naming_the_file(checkout, monkeypatch):
    monkeypatch.chdir(checkout)
    with pytest.raises(TrackedFile, match=r"^runs/shipped/best\.yaml: git tracks this file"):
        check_untracked(Path("runs/shipped"))
    with pytest.raises(TrackedFile, match=r"^\.gitignore: git tracks this file"):
        check_untracked(Path("."))  # the work tree's top
    check_untracked(checkout / "outputs")  # ignored files only


def test_outside_any_work_tree_git_is_not_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))  # git could not even be found
    (tmp_path / "best.yaml").write_text("old\n")
    atomic_write(tmp_path / "best.yaml", "new\n")
    assert (tmp_path / "best.yaml").read_text() == "new\n"


FAILING_GIT = "#!/bin/sh\necho 'fatal: detected dubious ownership in repository' >&2\nexit 128\n"


@pytest.mark.parametrize(("git", "reason"), [
    (None, "git is not installed"),
    (FAILING_GIT, "git says: fatal: detected dubious ownership in repository"),
], ids=["git-missing", "git-failing"])
@pytest.mark.subprocess
def test_in_a_work_tree_without_a_working_git_an_existing_file_is_refused(
        checkout, monkeypatch, tmp_path, git, reason):
    programs = tmp_path / "programs"
    programs.mkdir()
    if git is not None:
        (programs / "git").write_text(git)
        (programs / "git").chmod(0o755)
    monkeypatch.setenv("PATH", str(programs))
    mine = checkout / "outputs" / "mine.yaml"
    with pytest.raises(TrackedFile, match=rf"^{re.escape(str(mine))}: cannot tell whether git tracks it "
                                          rf"\({reason}\), and tune never changes a committed "
                                          "file$"):
        atomic_write(mine, "new\n")
    assert mine.read_text() == "ignored\n"
    atomic_write(checkout / "outputs" / "new.yaml", "new\n")  # a new file needs no git


def test_an_unused_path_is_the_path_or_the_first_free_numbered_one(tmp_path):
    assert unused_path(tmp_path / "best.json") == tmp_path / "best.json"
    (tmp_path / "best.json").write_text("x")
    (tmp_path / "best-2.json").mkdir()
    (tmp_path / "best-3.json").symlink_to("nowhere")
    assert unused_path(tmp_path / "best.json") == tmp_path / "best-4.json"
    (tmp_path / "run").mkdir()
    assert unused_path(tmp_path / "run") == tmp_path / "run-2"
