"""The engine's rooms import one way: every module imports, and the graph of gpu_engine imports
(module level and the lazy ones inside functions alike) has no cycle."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import gpu_engine
from tests.import_graph import find_cycle, module_imports

ENTRY_POINTS = {"gpu_engine.__main__"}  # runs the CLI on import


def _modules() -> dict[str, Path]:
    found = {"gpu_engine": Path(gpu_engine.__file__)}
    for info in pkgutil.walk_packages(gpu_engine.__path__, "gpu_engine."):
        spec = importlib.util.find_spec(info.name)
        assert spec is not None and spec.origin is not None
        found[info.name] = Path(spec.origin)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: module_imports(path, modules, name) - {name} for name, path in modules.items()}


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
