"""The catalog admin, one module per models module: built for thousands of products and offers.

Every foreign key is an autocomplete (no 10,000-option selects), every list selects its
related rows in the same query, and the bulk actions go through services over querysets,
not loops. Importing the modules registers their admins.
"""

from storefront.admin import (
    carts,
    catalog,
    fulfillment,
    imports,
    merchants,
    orders,
    statements,
)

__all__ = ["carts", "catalog", "fulfillment", "imports", "merchants", "orders", "statements"]
