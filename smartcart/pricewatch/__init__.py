"""Price watch: when offers change, the open carts they affect are re-optimised in one batch
and their shoppers told what they can save. Services, selectors, tasks, the e-mail and the
shopper-facing notice live here; ``storefront`` only sends
``storefront.catalog.offer_changes.offers_changed``."""
