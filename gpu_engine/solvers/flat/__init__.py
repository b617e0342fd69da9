"""Exact solver for flat carts (every merchant's cost is an opening cost plus per-line costs):
the cart as an uncapacitated facility location problem (data), Erlenkotter's dual ascent and
dual adjustment for an integer lower bound (dual), exact local search for the primal (local),
branch and bound on opening a merchant (branch) and the entry points (solve)."""
