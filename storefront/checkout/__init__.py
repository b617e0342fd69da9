"""Checkout: the review, the shipping address, placing the order and its stock moves."""
