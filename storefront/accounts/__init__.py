"""Accounts: sign-up, sign-in and password-reset services."""
