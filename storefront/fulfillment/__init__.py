"""Fulfillment (pricing contract version 2): merchants' warehouses, stock per warehouse and
parcel rates by weight.

``services`` writes warehouses and parcel rates, ``stock`` writes stock per warehouse (and keeps
``Offer.stock`` the total), ``selectors`` reads what a cart problem needs: each version 2
merchant's nodes and their parcel rate for a destination, and each offer's stock per node.
Models live in ``storefront.models.fulfillment``.
"""
