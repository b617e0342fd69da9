"""Merchant statements: what the marketplace owes each merchant for a period (selectors), the
periods a statement covers, and its CSV export."""
