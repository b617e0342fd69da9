"""The cart as a MILP solved by HiGHS (CPU only)."""
