"""The apps depend one way only: smartcart -> storefront -> gpu_engine.

storefront reaches smartcart only through dotted strings in settings and the root URLconf
(``STOREFRONT_CART_PANELS``, ``STOREFRONT_CART_OPTIMIZER``, ``API_URLCONFS``), never an
import; gpu_engine is a plain library that knows nothing of Django or the apps above it, and
the apps use only its declared API (``gpu_engine``, ``gpu_engine.batch``,
``gpu_engine.catalog``). Across the three packages the module graph has no cycle, and
services never import task modules: tasks import services, and services send work by task
name through ``storefront.enqueue``. The imports are read with ``ast`` from every module,
including imports inside functions.
"""

import ast

import pytest

from tests.import_graph import ROOT, find_cycle, import_graph, package_modules, parsed

PACKAGES = ("storefront", "smartcart", "gpu_engine")
# The engine's public modules: the apps import these and the names their ``__all__`` lists.
GPU_ENGINE_API = ("gpu_engine", "gpu_engine.batch", "gpu_engine.catalog")

FORBIDDEN = {
    "storefront": {"smartcart"},
    "gpu_engine": {"django", "rest_framework", "storefront", "smartcart"},
}


def _imported_modules(tree: ast.AST) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            modules.add(node.args[0].value)
    return modules


def _imported_roots(tree: ast.AST) -> set[str]:
    return {module.split(".")[0] for module in _imported_modules(tree)}


def _violations(package: str) -> list[str]:
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for root in sorted(_imported_roots(parsed(path)) & FORBIDDEN[package]):
            found.append(f"{path.relative_to(ROOT)} imports {root}")
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_run_one_way(package):
    assert _violations(package) == []


def test_storefront_tests_import_neither_smartcart_nor_its_tests():
    """The storefront's tests hold without smartcart too: shared helpers live in neutral
    modules (``tests.factories``, ``tests.carts``, ``tests.redis_server``), and what tests
    smartcart's hooks into the storefront lives in ``tests/smartcart``."""
    found = []
    for path in sorted((ROOT / "tests" / "storefront").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for module in sorted(_imported_modules(tree)):
            if module.split(".")[0] == "smartcart" or module.startswith("tests.smartcart"):
                found.append(f"{path.relative_to(ROOT)} imports {module}")
    assert found == []


def test_the_check_sees_imports_in_functions_and_import_module():
    source = (
        "import os\n"
        "def f():\n"
        "    from smartcart.models import OptimizationRun\n"
        "    import django.conf\n"
        "    importlib.import_module('rest_framework.views')\n"
        "from . import sibling\n"
    )
    assert _imported_roots(ast.parse(source)) == {"os", "smartcart", "django", "rest_framework"}


def _modules():
    return package_modules(PACKAGES, skip={"migrations"})


def test_the_packages_import_graph_has_no_cycle():
    assert find_cycle(import_graph(_modules())) is None


def _is(kind: str, module: str) -> bool:
    """``module`` is a ``kind`` module ("services", "tasks"), or inside a package of that name."""
    return kind in module.split(".")


def test_services_never_import_tasks():
    modules = _modules()
    graph = import_graph(modules)
    found = []
    for name in sorted(n for n in graph if _is("services", n)):
        imported = _imported_modules(parsed(modules[name]))
        targets = graph[name] | {m for m in imported if m.split(".")[0] in PACKAGES}
        found += [f"{name} imports {target}" for target in sorted(targets) if _is("tasks", target)]
    assert found == []


def _declared_names(module: str) -> set[str]:
    """The names ``module``'s ``__init__`` lists in ``__all__`` (read, not imported)."""
    path = ROOT.joinpath(*module.split("."), "__init__.py")
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if (
            isinstance(node, ast.Assign | ast.AnnAssign)
            and any(
                isinstance(t, ast.Name) and t.id == "__all__"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            and node.value is not None
        ):
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{module} declares no __all__")


def _engine_uses(tree: ast.AST) -> list[str]:
    """Every use of the engine in ``tree``: a module (``import gpu_engine.x``,
    ``import_module("gpu_engine.x")``) or a name (``from gpu_engine.x import name``)."""
    used = [m for m in _imported_modules(tree) if m.split(".")[0] == "gpu_engine"]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in used:
            used += [f"{node.module}:{alias.name}" for alias in node.names]
    return used


def _deep_engine_imports(package: str) -> list[str]:
    api = {module: _declared_names(module) for module in GPU_ENGINE_API}
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for use in sorted(set(_engine_uses(parsed(path)))):
            module, _, name = use.partition(":")
            if module not in api:
                if not name:  # the module is named once, not again for each of its names
                    found.append(f"{path.relative_to(ROOT)} imports {module}")
            elif name and name not in api[module] and f"{module}.{name}" not in api:
                found.append(f"{path.relative_to(ROOT)} imports {name} from {module}")
    return found


@pytest.mark.parametrize("package", ["storefront", "smartcart"])
def test_the_apps_use_only_the_engines_declared_api(package):
    assert _deep_engine_imports(package) == []


def test_the_checks_see_cycles_and_deep_imports():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    source = (
        "from gpu_engine import solve, planning\n"
        "from gpu_engine.catalog import radix_tree_build\n"
        "def f():\n"
        "    from gpu_engine.solvers.dp import solve\n"
        "    import gpu_engine.batch\n"
    )
    assert sorted(_engine_uses(ast.parse(source))) == [
        "gpu_engine",
        "gpu_engine.batch",
        "gpu_engine.catalog",
        "gpu_engine.catalog:radix_tree_build",
        "gpu_engine.solvers.dp",
        "gpu_engine.solvers.dp:solve",
        "gpu_engine:planning",
        "gpu_engine:solve",
    ]
    assert "planning" not in _declared_names("gpu_engine")
    assert {"solve_batch", "radix_tree_build"} <= _declared_names(
        "gpu_engine.batch"
    ) | _declared_names("gpu_engine.catalog")
    assert _is("services", "smartcart.services.lease") and not _is("tasks", "storefront.taskslist")


def test_the_graph_resolves_relative_imports(tmp_path):
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    sources = {
        "pkg/__init__.py": "from . import a\n",
        "pkg/a.py": "from .sub import b\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/b.py": "def f():\n    from ..a import x\n    from . import c\n",
        "pkg/sub/c.py": "",
    }
    modules = {}
    for relative, text in sources.items():
        path = tmp_path / relative
        path.write_text(text)
        name = relative.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        modules[name] = path
    assert import_graph(modules) == {
        "pkg": {"pkg.a"},
        "pkg.a": {"pkg.sub.b"},
        "pkg.sub": set(),
        "pkg.sub.b": {"pkg.a", "pkg.sub.c"},
        "pkg.sub.c": set(),
    }
    assert find_cycle(import_graph(modules)) == ["pkg.a", "pkg.sub.b", "pkg.a"]
