"""Exhaustive search over every assignment: the CPU twin (cpu) and the CUDA kernel (cuda)."""
