"""Catalog accelerators (not cart solvers): the radix tree for postal-code rules and the
cheapest offer per product."""
