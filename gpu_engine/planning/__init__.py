"""Choosing a solver within a budget: the planner, the rate profile, its calibration and the
full-search rate estimates."""
