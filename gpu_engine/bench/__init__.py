"""Benchmark suites, run by ``python -m gpu_engine bench [--suite NAME ...]``.

A suite is any module of this package that defines ``run(args) -> list[dict]`` (one dict per
table row) and, optionally, ``add_arguments(parser)``. The CLI discovers suites with pkgutil,
so adding ``gpu_engine/bench/<name>.py`` adds a suite without touching the CLI. Prefix a suite's
own options with its name (``--seed-cart-repeats``) so suites never clash. Rows should carry
``suite`` and ``case``; times in ``*_ms``, rates in ``*_per_s``. Benchmarks that compare with
the peers run them in the same invocation (:mod:`gpu_engine.bench.peers`).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def discover_suites() -> dict[str, ModuleType]:
    """Suite name -> module, for every module here with a ``run`` function."""
    suites = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        if callable(getattr(module, "run", None)):
            suites[info.name] = module
    return suites
