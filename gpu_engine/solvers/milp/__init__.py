"""The cart as a MILP solved by HiGHS (CPU only)."""

# Registers the version 2 program with the model (see ``model.VERSION_2``).
from gpu_engine.solvers.milp import fulfilled as _fulfilled  # noqa: F401
