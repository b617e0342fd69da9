"""Choosing a solver within a budget: estimates (:mod:`.estimates`), the plan (:mod:`.plan`),
the routes that run it (:mod:`.routes`, :mod:`.anytime`, :mod:`.executor`), the rate profile
and its calibration.

The public names load on first use: the solvers import this package's ``profile`` and
``rates``, which must not pull the planner (and the solvers it runs) in with them."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpu_engine.planning.estimates import Estimate, GpuState, cart_features
    from gpu_engine.planning.executor import solve_planned
    from gpu_engine.planning.plan import BudgetSplit, Plan, make_plan
    from gpu_engine.planning.profile import RateProfile, load_profile

_SOURCES = {
    "BudgetSplit": "gpu_engine.planning.plan",
    "Estimate": "gpu_engine.planning.estimates",
    "GpuState": "gpu_engine.planning.estimates",
    "Plan": "gpu_engine.planning.plan",
    "RateProfile": "gpu_engine.planning.profile",
    "cart_features": "gpu_engine.planning.estimates",
    "load_profile": "gpu_engine.planning.profile",
    "make_plan": "gpu_engine.planning.plan",
    "solve_planned": "gpu_engine.planning.executor",
}

__all__ = [
    "BudgetSplit",
    "Estimate",
    "GpuState",
    "Plan",
    "RateProfile",
    "cart_features",
    "load_profile",
    "make_plan",
    "solve_planned",
]


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module 'gpu_engine.planning' has no attribute {name!r}")
    value = getattr(importlib.import_module(_SOURCES[name]), name)
    globals()[name] = value
    return value
