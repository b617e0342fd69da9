"""Radix tree of uint64 keys (exact and longest-prefix match) on CPU and GPU."""
