"""The version 2 CP-SAT peer is a model of the spec: on small random v2 carts it proves the
brute-force optimum (ortools is the bench extra: skipped where it is not installed)."""

import pytest

from gpu_engine import CartProblem
from gpu_engine.fuzz.v2_carts import random_v2_cart
from gpu_engine.reference import reference_brute_force_v2

pytest.importorskip("ortools")


@pytest.mark.parametrize("seed", range(8))
def test_cpsat_v2_proves_the_brute_force_optimum(seed):
    from gpu_engine.bench.peers_v2 import run_cpsat_v2

    cart = random_v2_cart(300 + seed, 5, cents=[1, 100, 10_000][seed % 3])
    result = run_cpsat_v2(CartProblem.from_dict(cart), time_limit_s=30)
    assert result.optimal
    assert result.total == reference_brute_force_v2(cart)[0]
