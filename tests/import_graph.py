"""The import graph of our packages, read from their source with ``ast`` (nothing is imported),
and a cycle finder: shared by the engine's graph test and the apps' dependency tests."""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def package_modules(packages: Iterable[str], *, skip: Iterable[str] = ()) -> dict[str, Path]:
    """Dotted module name -> source file for every module under ``packages`` (folders of
    ``ROOT``), leaving out modules under a folder named in ``skip`` (e.g. migrations)."""
    found: dict[str, Path] = {}
    skipped = set(skip)
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if skipped & set(parts[:-1]):
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of the file at ``path``, read once per test session."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _absolute(node: ast.ImportFrom, name: str, path: Path) -> str | None:
    """The module ``from ... import`` reads, made absolute for a relative import in ``name``."""
    if node.level == 0:
        return node.module
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base) or None


def module_imports(path: Path, modules: dict[str, Path], name: str = "") -> set[str]:
    """Modules of ``modules`` that the file at ``path`` (module ``name``) imports anywhere in its
    body, inside functions too; ``from pkg import name`` counts as ``pkg.name`` when that is a
    module, else as ``pkg``."""
    targets: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = _absolute(node, name, path)
            if module is None:
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                targets.add(sub if sub in modules else module)
    return {t for t in targets if t in modules}


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Each module -> the modules of ``modules`` it imports (itself left out)."""
    return {name: module_imports(path, modules, name) - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None
