"""Carts: their lines, their pricing, and the hook that finds a cheaper assignment."""
