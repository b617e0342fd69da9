"""The cart problem of ``shared/spec/cart-pricing.md`` (version 2): validation and dense
compilation.

A :class:`CartProblem` is built once (from the spec's JSON, or from arrays the storefront
already holds) and compiled into dense int64 NumPy arrays that every solver reuses, CPU or GPU
(:mod:`gpu_engine.dense`). Validation refuses bad input with a :class:`ProblemError` naming the
field and the value.
"""

from gpu_engine.problem.cart import MONEY_LIMIT, CartProblem, column_labels
from gpu_engine.problem.errors import (
    BudgetError,
    CapacityError,
    DeviceUnavailable,
    FulfillmentUnsupported,
    ProblemError,
)
from gpu_engine.problem.fulfillment import Fulfillment, require_simple
from gpu_engine.problem.json_input import INT64_MAX, HugeInteger

__all__ = [
    "INT64_MAX",
    "MONEY_LIMIT",
    "BudgetError",
    "CapacityError",
    "CartProblem",
    "DeviceUnavailable",
    "Fulfillment",
    "FulfillmentUnsupported",
    "HugeInteger",
    "ProblemError",
    "column_labels",
    "require_simple",
]
