"""The layout is the architecture: packages sit in layers, each importing only from the layers
below it, and no module reaches itself through its imports. Every import counts (at module
level, inside a function, under ``TYPE_CHECKING``), since each is a dependency a reader must
follow."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Lowest first: a package may import from its own layer's modules and from the layers before it.
LAYERS = [
    ["engine"],
    ["tuner", "tuner.checker", "tuner.commands", "tuner.errors", "tuner.interrupts",
     "tuner.pickles", "tuner.ray_api", "tuner.space"],
    ["tuner.games"],
    ["tuner.strategies"],
    ["tuner.config"],
    ["tuner.cluster"],
    ["tuner.store"],
    ["tuner.loop"],
    ["tuner.analysis"],
    ["tuner.api"],
    ["tuner.cli", "tuner.__main__"],
]


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, known: set[str]) -> set[str]:
    """The project's modules that ``path`` imports, anywhere in it (``from package import
    module`` counts as the module, and a name from a package as the package)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                found.add(submodule if submodule in known else node.module)
    return {name for name in found if name in known}


def project_graph() -> dict[str, set[str]]:
    paths = [*ROOT.glob("engine/**/*.py"), *ROOT.glob("tuner/**/*.py")]
    known = {module_name(p) for p in paths}
    return {module_name(p): imports(p, known) - {module_name(p)} for p in paths}


GRAPH = project_graph()


def layer_of(module: str) -> int:
    """The layer of the longest listed name that holds ``module``."""
    best, layer = "", None
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > len(best):
                best, layer = name, index
    assert layer is not None, f"{module} is in no layer: add it to LAYERS"
    return layer


def test_no_module_imports_from_a_higher_layer():
    upward = [f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
              for module, targets in sorted(GRAPH.items()) for target in sorted(targets)
              if layer_of(target) > layer_of(module)]
    assert upward == []


def test_no_import_circle():
    circles, state = [], {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for target in sorted(GRAPH[module]):
            if state.get(target) == "open":
                circles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = "done"

    for module in sorted(GRAPH):
        if module not in state:
            visit(module, [module])
    assert circles == []


@pytest.mark.parametrize("package,forbidden", [("engine", {"ray", "argparse", "tuner", "cli"}),
                                               ("tuner", {"argparse"})])
def test_the_library_reads_no_command_line_and_the_engine_knows_no_ray(package, forbidden):
    for path in (ROOT / package).glob("**/*.py"):
        if path.is_relative_to(ROOT / "tuner" / "cli"):
            continue  # the command line's own package
        tops = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                tops |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                tops.add(node.module.split(".")[0])
        assert not tops & forbidden, path


def test_the_project_installs_two_top_level_packages():
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == {"engine", "tuner"}


def test_an_import_inside_a_function_says_why():
    """Imports belong at the top of a module; one inside a function is there to keep start-up
    fast or an optional dependency optional, and a comment says which: on the line before the
    imports that stand together, or on one of theirs."""
    silent = []
    for path in [*ROOT.glob("engine/**/*.py"), *ROOT.glob("tuner/**/*.py")]:
        lines = path.read_text(encoding="utf-8").splitlines()
        for function in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for block in import_blocks(function):
                said = lines[block[0].lineno - 2: block[-1].end_lineno]
                if not any("#" in line for line in said):
                    silent.append(f"{path.relative_to(ROOT)}:{block[0].lineno}")
    assert silent == []


def import_blocks(function: ast.AST) -> list[list[ast.stmt]]:
    """The runs of import statements that follow each other in ``function``'s bodies."""
    blocks = []
    for node in ast.walk(function):
        for body in (getattr(node, name, None) for name in ("body", "orelse", "finalbody")):
            if not isinstance(body, list):
                continue
            run: list[ast.stmt] = []
            for statement in [*body, None]:
                if isinstance(statement, (ast.Import, ast.ImportFrom)):
                    run.append(statement)
                elif run:
                    blocks.append(run)
                    run = []
    return blocks
