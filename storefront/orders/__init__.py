"""Checkout and orders: a reviewed cart becomes one paid order with one package per
merchant (services), read back by shoppers and merchant staff (selectors)."""
