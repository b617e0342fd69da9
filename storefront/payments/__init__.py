"""Payments of orders, through django-payments."""
