"""The engine's rooms import one way: every module imports, and the graph of gpu_engine imports
(module level and the lazy ones inside functions alike) has no cycle."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import gpu_engine

ENTRY_POINTS = {"gpu_engine.__main__"}  # runs the CLI on import


def _modules() -> dict[str, Path]:
    found = {"gpu_engine": Path(gpu_engine.__file__)}
    for info in pkgutil.walk_packages(gpu_engine.__path__, "gpu_engine."):
        spec = importlib.util.find_spec(info.name)
        assert spec is not None and spec.origin is not None
        found[info.name] = Path(spec.origin)
    return found


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    """gpu_engine modules that the file at ``path`` imports anywhere in its body; ``from pkg
    import name`` counts as ``pkg.name`` when that is a module, else as ``pkg``."""
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                targets.add(sub if sub in modules else node.module)
    return {t for t in targets if t in modules}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(path, modules) - {name} for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
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


def test_every_module_imports():
    for name in sorted(set(_modules()) - ENTRY_POINTS):
        importlib.import_module(name)


def test_import_graph_has_no_cycle():
    assert find_cycle(import_graph()) is None


def test_cycle_finder_sees_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]


def test_rooms_exist():
    graph = set(import_graph())
    for room in ("full", "dp", "ga"):
        assert {f"gpu_engine.solvers.{room}.cpu", f"gpu_engine.solvers.{room}.cuda"} <= graph
    assert "gpu_engine.solvers.registry" in graph
    assert "gpu_engine.catalog.radix.tree" in graph
    assert "gpu_engine.catalog.cheapest_offer.select" in graph
