"""Exact subset DP: host inputs, the numba CPU twin (cpu), the CUDA kernels (cuda), the
element operations compiled for both (ops) and the dispatcher (solve)."""
