"""The docs' commands work as documented: the fenced blocks of README.md and docs/*.md, read from
the markdown itself, are played in a temporary copy of the repository against the installed
``tune``: a line that is one plain ``tune`` command runs in a fork of a warm ``tune``
(tests/tune_forks.py: the same code, without a new interpreter's start), every other line in bash.

Every fenced block whose language is not ``text`` (shown output) carries a marker, an HTML comment
on the nearest non-blank line before it, that says what this test does with it:

    <!-- doc-test: run -->              sh: run each command, each must exit 0;
                                        python: run the block with this Python
    <!-- doc-test: run, exit 2 -->     the same, each command exiting with that status
    <!-- doc-test: capped -->           sh: cap the run configs the commands name, then run them
    <!-- doc-test: tune-only -->        sh: run only the block's ``tune`` commands
    <!-- doc-test: file PATH -->        write the block's text to PATH in the copy
    <!-- doc-test: skip: REASON -->     run nothing, for the reason given

The blocks of one page run in order in one copy, so a command may read what an earlier one wrote.
docs/extending.md documents the convention for writers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import tune_forks

from engine import yaml_text

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
# The results page and the studies' write-ups: markers, links and anchors checked as the docs'
WRITE_UPS = [REPO_ROOT / "runs" / "RESULTS.md",
             *sorted((REPO_ROOT / "docs" / "studies").glob("*.md"))]
BIN = Path(sys.executable).parent  # the environment tune2048 is installed in: its tune, python
COMMAND_TIMEOUT = 300  # seconds; the slowest documented command takes a few
EXIT_CODE = re.compile(r"exit (\d+)")

# What a capped config becomes: a run of seconds that still goes through every stage.
CAPS = {
    ("cmaes", "max_generations"): 1,
    ("cmaes", "max_games"): None,
    ("cmaes", "popsize"): 4,
    ("cmaes", "restarts"): 0,
    ("evaluation", "games"): 8,
    ("validation", "games"): 8,
    ("validation", "top_k"): 1,
    ("validation", "every"): 0,
    ("ray", "games_per_task"): 4,
}
MAX_CAPPED_DEPTH = 1

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[^`\s]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(?P<body>.*?)\s*-->\s*$")
ACTIONS_BY_LANGUAGE = {"run": {"sh", "python"}, "capped": {"sh"}, "tune-only": {"sh"}}
UNMARKED_LANGUAGES = {"text"}  # shown output: nothing to run


@dataclasses.dataclass(frozen=True)
class Marker:
    action: str  # run, capped, tune-only, file, skip
    argument: str = ""  # file: the path; skip: the reason
    exit_code: int = 0


@dataclasses.dataclass(frozen=True)
class Block:
    doc: Path
    line: int  # of the opening fence, from 1
    lang: str
    text: str
    marker: Marker | None
    marker_error: str = ""

    @property
    def where(self) -> str:
        return f"{self.doc.name}:{self.line}"


def parse_marker(body: str) -> Marker:
    """A marker's body (what follows ``doc-test:``); ValueError when it is not one."""
    if body.startswith("skip"):
        reason = body.removeprefix("skip").lstrip()
        if not reason.startswith(":") or not reason[1:].strip():
            raise ValueError(f"skip needs a reason: 'skip: REASON', got {body!r}")
        return Marker("skip", reason[1:].strip())
    action, *options = [part.strip() for part in body.split(",")]
    if action.startswith("file "):
        path = action.removeprefix("file ").strip()
        if not path or options:
            raise ValueError(f"'file PATH' takes one path and no options, got {body!r}")
        return Marker("file", path)
    if action not in ACTIONS_BY_LANGUAGE:
        raise ValueError(f"unknown action {action!r} in {body!r} (run, capped, tune-only, "
                         "file PATH, skip: REASON)")
    exit_code = 0
    for option in options:
        match = EXIT_CODE.fullmatch(option)
        if match is None:
            raise ValueError(f"unknown option {option!r} in {body!r} (exit N)")
        exit_code = int(match.group(1))
    return Marker(action, exit_code=exit_code)


def read_blocks(doc: Path, text: str | None = None) -> tuple[list[Block], list[str]]:
    """The fenced blocks of a markdown page, each with its marker; and the markers that stand
    before no block (a problem)."""
    lines = (doc.read_text(encoding="utf-8") if text is None else text).splitlines()
    blocks, orphans = [], []
    last_marker: tuple[int, str] | None = None  # (line index, body) of a marker not yet used
    i = 0
    while i < len(lines):
        marker_match = MARKER.match(lines[i])
        fence_match = FENCE.match(lines[i])
        if marker_match:
            if last_marker is not None:
                orphans.append(f"{doc.name}:{last_marker[0] + 1}")
            last_marker = (i, marker_match.group("body"))
        elif fence_match:
            indent, fence = fence_match.group("indent"), fence_match.group("fence")
            end = i + 1
            closing = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
            while end < len(lines) and not closing.match(lines[end]):
                end += 1
            body = "\n".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                             for line in lines[i + 1:end]) + "\n"
            marker, error = None, ""
            if last_marker is not None:
                try:
                    marker = parse_marker(last_marker[1])
                except ValueError as err:
                    error = str(err)
            blocks.append(Block(doc, i + 1, fence_match.group("lang"), body, marker, error))
            last_marker = None
            i = end
        elif lines[i].strip() and last_marker is not None:
            orphans.append(f"{doc.name}:{last_marker[0] + 1}")
            last_marker = None
        i += 1
    if last_marker is not None:
        orphans.append(f"{doc.name}:{last_marker[0] + 1}")
    return blocks, orphans


def marker_problems(blocks: list[Block]) -> list[str]:
    """Blocks without a language, without a valid marker, or with a marker their language
    cannot take."""
    problems = []
    for block in blocks:
        if not block.lang:
            problems.append(f"{block.where}: a fenced block needs a language (sh, python, yaml, "
                            "text, ...)")
        elif block.marker_error:
            problems.append(f"{block.where}: {block.marker_error}")
        elif block.marker is None:
            if block.lang not in UNMARKED_LANGUAGES:
                problems.append(f"{block.where}: a {block.lang} block without a doc-test marker "
                                "on the line before it")
        elif block.marker.action in ACTIONS_BY_LANGUAGE and \
                block.lang not in ACTIONS_BY_LANGUAGE[block.marker.action]:
            problems.append(f"{block.where}: '{block.marker.action}' does not apply to a "
                            f"{block.lang} block")
    return problems


def commands(block: Block) -> list[str]:
    """The shell commands of an sh block: one a line (a line ending in a backslash goes on), comment
    lines and blank lines skipped."""
    found, pending = [], ""
    for line in block.text.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.strip() and not line.lstrip().startswith("#"):
            found.append(line.strip())
    return found


def tune_commands(command: str) -> list[str]:
    """The ``tune`` commands of a line such as ``pip install -e . && tune --config FILE  # ...``."""
    return [part.strip() for part in command.split("#", 1)[0].split("&&")
            if part.split()[:1] == ["tune"]]


SHELL_OPERATORS = ";&|<>()"
SHELL_EXPANSIONS = set("$`*?~[{\\")


def plain_tune(command: str) -> list[str] | None:
    """The arguments of a line that is one ``tune`` command and nothing the shell would act on
    (operators, redirections, expansions), else None."""
    if SHELL_EXPANSIONS & set(command.split("#", 1)[0]):
        return None
    lexer = shlex.shlex(command, posix=True, punctuation_chars=SHELL_OPERATORS)
    lexer.whitespace_split = True
    words = list(lexer)
    if words[:1] != ["tune"] or any(set(word) <= set(SHELL_OPERATORS) for word in words):
        return None
    return words[1:]


def cap_configs(command: str, root: Path) -> list[str]:
    """Cap the run configs that ``command`` names, in place in the copy ``root``; returns them."""
    capped = []
    for word in shlex.split(command, comments=True):
        path = root / word
        if not word.endswith((".yaml", ".yml")) or not path.is_file():
            continue
        config = yaml_text.load(path.read_text(encoding="utf-8"))
        if not isinstance(config, dict) or "format" in config or "family" not in config:
            continue  # a weights file, or not a run config
        for (section, key), value in CAPS.items():
            if not isinstance(config.get(section), dict):
                config[section] = {}
            config[section][key] = value
        search = config.setdefault("search", {}) or {}
        search["depth"] = min(search.get("depth", MAX_CAPPED_DEPTH), MAX_CAPPED_DEPTH)
        config["search"] = search
        path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        capped.append(word)
    return capped


def copy_repository(target: Path) -> Path:
    """The repository's files as a fresh clone would have them (tracked, and new files git does
    not ignore), without its environment, its outputs or its git directory."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT, capture_output=True, check=False)
    if listed.returncode == 0:
        names = [name for name in listed.stdout.decode().split("\0") if name]
        for name in names:
            source = REPO_ROOT / name
            if source.is_file() and not source.is_symlink():
                (target / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target / name)
    else:  # not a git checkout: the tree, less what a clone would not hold
        shutil.copytree(REPO_ROOT, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(
            ".git", ".venv*", "outputs", "__pycache__", "*.egg-info", "build", "dist",
            ".pytest_cache", ".ruff_cache"))
    return target


def environment() -> dict[str, str]:
    """This environment's ``tune`` and ``python`` first on PATH; no Ray cluster to join."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               MPLBACKEND="Agg")
    for name in ("RAY_ADDRESS", "PYTHONPATH"):
        env.pop(name, None)
    return env


def fingerprint(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def play(blocks: list[Block], root: Path) -> tuple[list[str], list[str]]:
    """Play the blocks in order in ``root``; returns the failures and a line per step with its
    time."""
    failures, timings = [], []
    env = environment()

    def execute(where: str, argv: list[str], expected: int, shown: str) -> None:
        started = time.perf_counter()
        tune_args = plain_tune(argv[-1]) if argv[0] == "bash" else None
        try:
            if tune_args is not None:  # a fork of a warm tune, as the installed one runs it
                done = tune_forks().run(tune_args, root, env, timeout=COMMAND_TIMEOUT)
            else:
                done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True,
                                      timeout=COMMAND_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            failures.append(f"{where}: {shown}\n  timed out after {COMMAND_TIMEOUT} s")
            return
        finally:
            timings.append(f"{time.perf_counter() - started:6.1f} s  {where}  {shown}")
        if done.returncode != expected:
            failures.append(f"{where}: {shown}\n  exit status {done.returncode}, expected "
                            f"{expected}\n  stdout: {done.stdout[-1500:]}\n  stderr: "
                            f"{done.stderr[-1500:]}")

    for block in blocks:
        marker = block.marker
        if marker is None or marker.action == "skip":
            continue
        if marker.action == "file":
            target = root / marker.argument
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.text, encoding="utf-8")
            continue
        if block.lang == "python":
            execute(block.where, [str(BIN / "python"), "-P", "-c", block.text],
                    marker.exit_code, "python block")
            continue
        lines = commands(block)
        if marker.action == "tune-only":
            lines = [tune for line in lines for tune in tune_commands(line)]
        if not lines:
            failures.append(f"{block.where}: a '{marker.action}' block with no command to run")
        for line in lines:
            if marker.action == "capped":
                cap_configs(line, root)
            execute(block.where, ["bash", "-c", line], marker.exit_code, line)
    return failures, timings


def all_blocks() -> list[Block]:
    return [block for doc in [*DOCS, *WRITE_UPS] for block in read_blocks(doc)[0]]


# ---- the convention holds for every page (fast) ---------------------------------------------------


def test_every_block_carries_a_valid_marker():
    blocks = all_blocks()
    assert len(blocks) >= 20 and {b.doc.name for b in blocks} >= {"README.md", "families.md"}
    orphans = [where for doc in [*DOCS, *WRITE_UPS] for where in read_blocks(doc)[1]]
    problems = marker_problems(blocks) + [f"{where}: a marker before no block"
                                          for where in orphans]
    assert not problems, "\n".join(problems)


def test_the_readme_keeps_its_quick_start_as_its_first_block():
    first = read_blocks(DOCS[0])[0][0]
    assert first.lang == "sh"
    assert [command.split("#", 1)[0].strip() for command in commands(first)] == [
        "python3 -m venv .venv && . .venv/bin/activate",  # what follows installs there
        "pip install -e . && tune --config configs/quick.yaml",  # CI and a hook read these two
        'pip install -e ".[dev]" && python -m pytest -q',
        "python -m pytest -q -m unit",
    ]
    assert first.marker == Marker("tune-only")


@pytest.mark.subprocess
def test_the_readmes_first_line_makes_the_environment_that_the_install_goes_into(tmp_path):
    """The quick start's first line, as written (its block runs only its ``tune`` commands):
    once it has run, ``python`` and ``pip`` are the new environment's."""
    first = commands(read_blocks(DOCS[0])[0][0])[0].split("#", 1)[0].strip()
    done = subprocess.run(["bash", "-c", f"{first} && command -v python pip"], cwd=tmp_path,
                          env=environment(), capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(tmp_path / ".venv" / "bin" / name)
                                   for name in ("python", "pip")]


def test_the_readme_links_every_docs_page_and_every_link_resolves():
    readme = DOCS[0].read_text(encoding="utf-8")
    for page in DOCS[1:]:
        assert f"(docs/{page.name})" in readme, f"README.md does not link docs/{page.name}"
    broken = []
    for doc in [*DOCS, *WRITE_UPS]:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            if path and "://" not in path and not (doc.parent / path).exists():
                broken.append(f"{doc.name}: {target}")
    assert not broken, "\n".join(broken)


def test_anchors_within_the_docs_resolve():
    def anchors(doc: Path) -> set[str]:
        headings = re.findall(r"^#+ (.+)$", doc.read_text(encoding="utf-8"), re.MULTILINE)
        return {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}

    broken = []
    for doc in [*DOCS, *WRITE_UPS]:
        for path, anchor in re.findall(r"\]\(([^)\s#]*)#([^)\s]+)\)",
                                       doc.read_text(encoding="utf-8")):
            target = doc if not path else (doc.parent / path).resolve()
            if target.suffix == ".md" and target.exists() and anchor not in anchors(target):
                broken.append(f"{doc.name}: {path}#{anchor}")
    assert not broken, "\n".join(broken)


# ---- the harness itself: it finds every block and fails on a broken one (fast) --------------------

SAMPLE = """\
<!-- doc-test: file hello.txt -->
```text
hello
```

<!-- doc-test: run -->
```sh
test "$(cat hello.txt)" = hello    # reads what the block before wrote
```

<!-- doc-test: run, exit 3 -->
```sh
bash -c 'exit 3'
```

<!-- doc-test: run, exit 2 -->
```sh
tune play --games 0    # refused: runs in a fork of a warm tune
```

- a list item with a block:

  <!-- doc-test: skip: an excerpt -->
  ```toml
  [tool]
  ```

```text
shown output needs no marker
```
"""


def test_the_harness_reads_every_block_with_its_marker():
    blocks, orphans = read_blocks(Path("sample.md"), SAMPLE)
    assert [(b.lang, b.marker.action if b.marker else None) for b in blocks] == [
        ("text", "file"), ("sh", "run"), ("sh", "run"), ("sh", "run"), ("toml", "skip"),
        ("text", None)]
    assert blocks[2].marker.exit_code == 3 and blocks[4].text == "[tool]\n"
    assert not orphans and not marker_problems(blocks)


@pytest.mark.subprocess
def test_the_harness_passes_a_good_page_and_fails_a_broken_command(tmp_path):
    blocks, _ = read_blocks(Path("sample.md"), SAMPLE)
    failures, timings = play(blocks, tmp_path)
    assert not failures and len(timings) == 3
    broken, _ = read_blocks(Path("sample.md"), SAMPLE.replace("= hello", "= goodbye"))
    (tmp_path / "again").mkdir()
    failures, _ = play(broken, tmp_path / "again")
    assert len(failures) == 1 and failures[0].startswith("sample.md:7:")
    assert "exit status 1, expected 0" in failures[0]


@pytest.mark.parametrize("text, problem", [
    ("```sh\ntune families\n```\n", "without a doc-test marker"),
    ("```\ntune families\n```\n", "needs a language"),
    ("<!-- doc-test: run -->\n```yaml\na: 1\n```\n", "does not apply to a yaml block"),
    ("<!-- doc-test: skip -->\n```sh\nx\n```\n", "skip needs a reason"),
    ("<!-- doc-test: runs -->\n```sh\nx\n```\n", "unknown action"),
    ("<!-- doc-test: run, exit two -->\n```sh\nx\n```\n", "unknown option"),
])
def test_the_harness_refuses_a_block_without_a_valid_marker(text, problem):
    blocks, _ = read_blocks(Path("sample.md"), text)
    assert any(problem in p for p in marker_problems(blocks))


def test_a_marker_before_no_block_is_found():
    _, orphans = read_blocks(Path("sample.md"), "<!-- doc-test: run -->\nsome text\n")
    assert orphans == ["sample.md:1"]


def test_capping_shrinks_a_run_config_and_leaves_weights_files_alone(tmp_path):
    shutil.copy(REPO_ROOT / "configs" / "classic-d3.yaml", tmp_path / "d3.yaml")
    shutil.copy(REPO_ROOT / "engine" / "baselines" / "classic-reference.yaml", tmp_path / "w.yaml")
    weights = (tmp_path / "w.yaml").read_text(encoding="utf-8")
    assert cap_configs("tune run d3.yaml --workers 2  # w.yaml", tmp_path) == ["d3.yaml"]
    assert cap_configs("tune compare w.yaml classic-reference", tmp_path) == []
    capped = yaml_text.load((tmp_path / "d3.yaml").read_text(encoding="utf-8"))
    assert capped["search"]["depth"] == 1 and capped["cmaes"]["max_generations"] == 1
    assert capped["evaluation"]["games"] == 8 and capped["validation"]["games"] == 8
    assert (tmp_path / "w.yaml").read_text(encoding="utf-8") == weights


def test_a_plain_tune_line_is_told_from_one_the_shell_acts_on():
    assert plain_tune("tune play --games 0   # a && b > c") == ["play", "--games", "0"]
    assert plain_tune('tune play --board "2 0 0 2 / 0 4 0 0"') == [
        "play", "--board", "2 0 0 2 / 0 4 0 0"]
    for shell in ("tune report runs/x > report.txt", "pip install -e . && tune run a.yaml",
                  "tune play --weights $HOME/best.yaml", "tune report runs/*", "tune play|head",
                  "sed 's/a/b/' a.yaml > b.yaml", "python -m tuner play"):
        assert plain_tune(shell) is None, shell


def test_tune_only_keeps_the_tune_commands():
    assert tune_commands("pip install -e . && tune --config configs/quick.yaml   # a && b") == [
        "tune --config configs/quick.yaml"]
    assert tune_commands('pip install -e ".[dev]" && python -m pytest -q') == []


# ---- the pages' commands (slow) ---------------------------------------------------------------------


def runnable(doc: Path) -> bool:
    return any(b.marker and b.marker.action not in ("skip", "file") for b in read_blocks(doc)[0])


@pytest.mark.slow
@pytest.mark.parametrize("doc", [d for d in DOCS if runnable(d)],
                         ids=lambda d: d.relative_to(REPO_ROOT).as_posix())
@pytest.mark.subprocess
def test_the_commands_of_a_page_work_as_documented(doc, tmp_path):
    root = copy_repository(tmp_path / "clone")
    shipped = fingerprint(root / "runs")
    blocks, _ = read_blocks(doc)
    failures, timings = play(blocks, root)
    print("\n".join(timings))
    assert fingerprint(root / "runs") == shipped, "a documented command wrote into runs/"
    assert not failures, "\n\n".join(failures)


# ---- the commands in the shipped configs' comments ------------------------------------------------

CONFIG_COMMAND = re.compile(r"^#\s+(tune\s.*?)\s*$")
SHIPPED_CONFIGS = sorted([*(REPO_ROOT / "configs").glob("*.yaml"),
                          *(REPO_ROOT / "examples").rglob("*.yaml")])


def config_commands() -> list[Block]:
    """A capped block for every comment line of a shipped config that is a ``tune`` command."""
    return [Block(doc=path, line=number, lang="sh", text=found[1] + "\n",
                  marker=Marker("capped"))
            for path in SHIPPED_CONFIGS
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if (found := CONFIG_COMMAND.match(line))]


def test_the_shipped_configs_show_commands():
    assert "tune --config examples/families/seed001.yaml\n" in [
        block.text for block in config_commands()]


@pytest.mark.slow
@pytest.mark.subprocess
def test_the_commands_in_the_shipped_configs_comments_work(tmp_path):
    """Each ``# tune ...`` comment line of configs/ and examples/ runs in a copy of the
    repository, its run configs capped."""
    root = copy_repository(tmp_path / "clone")
    shipped = fingerprint(root / "runs")
    failures, timings = play(config_commands(), root)
    print("\n".join(timings))
    assert fingerprint(root / "runs") == shipped, "a config's command wrote into runs/"
    assert not failures, "\n\n".join(failures)


# ---- docs/cli.md's recipe for nneonneo/2048-ai ---------------------------------------------------

# The lines of nneonneo/2048-ai's 2048.cpp (its commit 41e298f) that the recipe changes
NNEONNEO_LINES = """#include "2048.h"
static const float SCORE_LOST_PENALTY = 200000.0f;
static const float SCORE_MONOTONICITY_POWER = 4.0f;
static const float SCORE_MONOTONICITY_WEIGHT = 47.0f;
static const float SCORE_SUM_POWER = 3.5f;
static const float SCORE_SUM_WEIGHT = 11.0f;
static const float SCORE_MERGES_WEIGHT = 700.0f;
static const float SCORE_EMPTY_WEIGHT = 270.0f;

void init_tables() {}
    state.depth_limit = std::max(3, count_distinct_tiles(board) - 2);
"""


@pytest.mark.subprocess
def test_the_sed_lines_for_nneonneo_make_the_source_they_describe(tmp_path):
    """docs/cli.md tells users to drop an export into nneonneo/2048-ai with sed, and to fix its
    depth with another: run them on its lines."""
    docs = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    drop_in = next(line for line in docs.splitlines() if line.startswith("sed -i -e"))
    fixed_depth = next(part for part in docs.split("`") if part.startswith("sed -i 's/std::max"))
    source = tmp_path / "2048.cpp"
    source.write_text(NNEONNEO_LINES)
    for command in (drop_in, fixed_depth):
        subprocess.run(["bash", "-c", command], cwd=tmp_path, check=True)
    assert source.read_text() == ('#include "2048.h"\n#include "tuned.h"\n\n'
                                  "void init_tables() {}\n    state.depth_limit = 3;\n")
