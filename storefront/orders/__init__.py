"""Orders after checkout: the merchant workflow of packages, status changes, expiry of unpaid
orders and the confirmation mail (services), read back by shoppers and merchant staff
(selectors)."""
