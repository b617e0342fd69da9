"""Smart Cart's engine: the cart problem, exact pricing and solvers on CPU and GPU.

A plain library (NumPy, Numba, numba-cuda); it never imports Django and never touches CUDA at
import time. Typical use::

    from gpu_engine import CartProblem, solve
    solution = solve(CartProblem.from_json(text))
"""

from gpu_engine.device import gpu_available
from gpu_engine.entry import solve
from gpu_engine.pricing import price_assignment
from gpu_engine.problem import CartProblem, ProblemError
from gpu_engine.solution import MerchantCost, Solution
from gpu_engine.warmup import warmup

__all__ = [
    "CartProblem",
    "MerchantCost",
    "ProblemError",
    "Solution",
    "gpu_available",
    "price_assignment",
    "solve",
    "warmup",
]
