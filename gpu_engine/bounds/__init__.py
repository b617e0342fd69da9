"""Lower bounds on a cart's optimum, to prove heuristic answers optimal (CPU: HiGHS's LP)."""
