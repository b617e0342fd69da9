"""The demo marketplace: its catalog (data in catalog.json), product images and orders."""
