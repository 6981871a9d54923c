"""engine is a library below the tuner and the command line: it knows nothing of Ray (shipping a
family's code to workers is ``tuner.cluster.shipping``'s) nor of argparse, and its family modules import
each other one way only."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
FORBIDDEN_MODULES = ("ray", "argparse")
# Ray's words for what travels to its workers, and Ray itself, as code or prose names them
RAY_WORDS = re.compile(r"\bRay\b|\bray\.|runtime_env|py_modules|working_dir")


def engine_modules() -> dict[str, ast.Module]:
    """Every module under engine/, by dotted name, parsed."""
    modules = {}
    for path in sorted(ENGINE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = ast.parse(path.read_text(encoding="utf-8"), str(path))
    return modules


def imported(tree: ast.Module, module: str) -> set[str]:
    """The modules ``tree`` imports anywhere (at the top, in functions, by importlib or through
    sys.modules), resolved against ``module``'s package."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module.split(".")[: len(module.split(".")) - node.level]
                base = ".".join(package + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(
                r"[A-Za-z_][\w.]*", node.value):
            names.add(node.value)  # importlib.import_module("x"), sys.modules.get("x")
    return names


def test_no_engine_module_imports_ray_or_argparse_or_speaks_of_ray():
    offenders = []
    for module, tree in engine_modules().items():
        for name in imported(tree, module):
            if name.split(".")[0] in FORBIDDEN_MODULES:
                offenders.append(f"{module} imports {name}")
    for path in sorted(ENGINE.rglob("*.py")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if RAY_WORDS.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders


@pytest.mark.subprocess
def test_importing_all_of_engine_leaves_ray_and_argparse_unimported():
    code = (
        "import importlib, pkgutil, sys\n"
        "import engine\n"
        "names = [m.name for m in pkgutil.walk_packages(engine.__path__, 'engine.')]\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "print(len(names), sorted({m.split('.')[0] for m in sys.modules} & {'ray', 'argparse'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    count, loaded = done.stdout.split(" ", 1)
    assert int(count) >= len(engine_modules()) - 1  # every module but the package itself
    assert loaded.strip() == "[]"


def test_the_family_modules_import_each_other_one_way():
    """No cycle among engine.families' modules, counting imports inside functions too (the guard
    and the registry once imported each other, held apart by imports inside functions)."""
    modules = engine_modules()
    family_modules = {m for m in modules if m.startswith("engine.families.")}
    graph = {m: imported(modules[m], m) & family_modules - {m} for m in family_modules}

    def cycle_from(start: str, path: list[str]) -> list[str] | None:
        for nxt in sorted(graph[path[-1]]):
            if nxt == start:
                return [*path, nxt]
            if nxt not in path:
                found = cycle_from(start, [*path, nxt])
                if found:
                    return found
        return None

    cycles = [cycle for m in sorted(family_modules) if (cycle := cycle_from(m, [m]))]
    assert not cycles, cycles[0]
    assert "engine.families.guard" in graph["engine.families.registry"]  # it sees imports
