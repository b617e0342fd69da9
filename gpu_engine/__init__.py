"""Smart Cart's engine: the cart problem, exact pricing and solvers on CPU and GPU.

A plain library (NumPy, Numba, numba-cuda); it never imports Django and never touches CUDA at
import time. Typical use::

    from gpu_engine import CartProblem, solve
    solution = solve(CartProblem.from_json(text))

This module, :mod:`gpu_engine.batch` (many carts at once) and :mod:`gpu_engine.catalog` (catalog
accelerators) are the engine's public API: the apps import nothing deeper.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gpu_engine.device import gpu_available
from gpu_engine.entry import solve
from gpu_engine.pricing import assignment_cost, price_assignment
from gpu_engine.problem import MONEY_LIMIT, CartProblem, ProblemError
from gpu_engine.results import SolverInconsistency
from gpu_engine.solution import MerchantCost, Solution, json_safe
from gpu_engine.warmup import WARMUP_CART, warmup

if TYPE_CHECKING:
    from gpu_engine.planning import GpuState, Plan, RateProfile, load_profile, make_plan

# The planner's names load on first use: importing the engine stays as light as the solve
# path needs, and the planner's own imports keep their place in the warm-up's timing.
_PLANNING = ("GpuState", "Plan", "RateProfile", "load_profile", "make_plan")

__all__ = [
    "MONEY_LIMIT",
    "WARMUP_CART",
    "CartProblem",
    "GpuState",
    "MerchantCost",
    "Plan",
    "ProblemError",
    "RateProfile",
    "Solution",
    "SolverInconsistency",
    "assignment_cost",
    "gpu_available",
    "json_safe",
    "load_profile",
    "make_plan",
    "price_assignment",
    "solve",
    "warmup",
]


def __getattr__(name: str) -> Any:
    if name not in _PLANNING:
        raise AttributeError(f"module 'gpu_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module("gpu_engine.planning"), name)
    globals()[name] = value
    return value
