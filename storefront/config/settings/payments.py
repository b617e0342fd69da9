"""Money: the payment ledger, refunds and marketplace commission."""
