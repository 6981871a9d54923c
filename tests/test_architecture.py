"""docs/architecture.md stays true to the code: every module, package and name it cites exists,
every module and package is described there, its layers are tests/test_layers.py's, and the
modules keep to the sizes and names it promises."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from test_layers import LAYERS, layer_of

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "architecture.md"
TEXT = PAGE.read_text(encoding="utf-8")
CITED = set(re.findall(r"`([^`\s]+)`", TEXT))
PATHS = {name for name in CITED if re.fullmatch(r"(engine|tuner)(/[\w.]+)*/?", name)}
DOTTED = {name for name in CITED if re.fullmatch(r"(engine|tuner)(\.\w+)+", name)}
MODULES = sorted(p.relative_to(ROOT) for p in [*ROOT.glob("engine/**/*.py"),
                                                *ROOT.glob("tuner/**/*.py")])
PACKAGES = sorted({p.parent for p in MODULES if p.name == "__init__.py"})
MOST_LINES = 400


def module_path(dotted: str) -> Path | None:
    """The file of the module ``dotted`` names, or None if it names none."""
    base = ROOT.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def bound(node: ast.stmt) -> set[str]:
    """The names a module's or a class's statement binds: a def, a class, an assignment, an
    import."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {alias.asname or alias.name.split(".")[0] for alias in node.names}
    return set()


def defines(body: list[ast.stmt], name: str) -> ast.stmt | None:
    """The statement of ``body`` that binds ``name``, or None."""
    return next((node for node in body if name in bound(node)), None)


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or a module and names bound in it (a class's own names
    after the class's)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_path(".".join(parts[:cut]))
        if path is None:
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for name in parts[cut:]:
            node = defines(body, name)
            if node is None:
                return False
            body = node.body if isinstance(node, ast.ClassDef) else []
        return True
    return False


def test_every_module_and_name_the_page_cites_exists():
    assert len(PATHS) > 50 and len(DOTTED) > 10  # the page was read
    missing = sorted(name for name in PATHS if not (ROOT / name).exists())
    missing += sorted(name for name in DOTTED if not resolves(name))
    assert missing == []


def test_every_package_and_module_is_described():
    named = {path.rstrip("/") for path in PATHS} | {name.replace(".", "/") for name in DOTTED}
    packages = [str(p) for p in PACKAGES if str(p) not in named]
    modules = [str(m) for m in MODULES if str(m) not in named
               and not (m.name == "__init__.py" and str(m.parent) in named)]
    assert (packages, modules) == ([], [])


def test_the_layers_table_is_the_layers_of_the_imports():
    rows = re.findall(r"^\| (\d+) \| `((?:engine|tuner)[\w/]*)/` ", TEXT, re.MULTILINE)
    assert [int(layer) for layer, _ in rows] == list(range(len(LAYERS)))
    for layer, package in rows:
        assert layer_of(package.replace("/", ".")) == int(layer), package


def test_no_module_of_the_tuner_is_longer_than_the_page_says():
    lengths = {str(m): len((ROOT / m).read_text(encoding="utf-8").splitlines())
               for m in MODULES if m.parts[0] == "tuner"}
    assert f"No module of `tuner/` is longer than {MOST_LINES} lines" in TEXT
    assert {m: n for m, n in lengths.items() if n > MOST_LINES} == {}


def test_a_module_name_is_shared_only_by_a_subcommand_and_what_it_runs():
    """One name, one feature: a name two modules of ``tuner/`` share is a subcommand's
    (``tuner/cli/NAME.py``) and the one module that computes or runs it."""
    by_name = defaultdict(list)
    for module in MODULES:
        if module.parts[0] == "tuner" and module.name != "__init__.py":
            by_name[module.name].append(module)
    shared = {name: [str(m.parent) for m in found] for name, found in by_name.items()
              if len(found) > 2 or len(found) == 2 and "tuner/cli" not in map(str, (
                  m.parent for m in found))}
    assert shared == {}
