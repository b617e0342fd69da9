"""Exact subset DP: host inputs, the numba CPU twin (cpu), the CUDA kernels (cuda), the
element operations compiled for both (ops) and the dispatcher (solve). Version 2 carts (several
nodes a merchant, weight tiers): the owners' node-split tables (owners, owner_inputs) and their
dispatcher (solve_v2); common holds what both paths share."""
