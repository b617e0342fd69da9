"""The cart solvers, one room each (full search, subset DP, GA, MILP), and the registry that
names them for :func:`gpu_engine.solve`."""
