"""Cheapest offer per product over CSR or dense offer tables, on CPU and GPU."""
