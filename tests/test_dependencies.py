"""The apps depend one way only: smartcart -> storefront -> gpu_engine.

storefront reaches smartcart only through dotted strings in settings and the root URLconf
(``STOREFRONT_CART_PANELS``, ``STOREFRONT_CART_OPTIMIZER``, ``API_URLCONFS``), never an
import; gpu_engine is a plain library that knows nothing of Django or the apps above it. The
imports are read with ``ast`` from every module, including imports inside functions.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

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
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for root in sorted(_imported_roots(tree) & FORBIDDEN[package]):
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
