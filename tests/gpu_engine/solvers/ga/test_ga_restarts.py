"""GA restarts: with ``restarts`` a run that stalls starts again from the next seed
until its budget ends, keeps the best run, and does the same on both devices."""

import pytest

import gpu_engine.solvers.ga.solve as ga_module
from gpu_engine import CartProblem
from gpu_engine.planning.carts import random_cart
from gpu_engine.solvers.ga.solve import GaConfig, restart_seed, solve_ga
from tests.gpu_engine.solvers.ga.test_ga_deadline import StepClock

pytestmark = [
    pytest.mark.filterwarnings("ignore::numba.core.errors.NumbaWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning"),
]

PROBLEM = CartProblem.from_dict(random_cart(3, 24, n_merchants=12, offers=(2, 6)))
QUICK_STALL = GaConfig(population=16, stall_generations=2)


def test_a_stalled_run_restarts_from_new_seeds_until_the_budget_ends(monkeypatch):
    # A clock that moves at every reading: where the run stops is a function of its steps.
    monkeypatch.setattr(ga_module, "time", StepClock(1e-4))
    once = solve_ga(PROBLEM, budget_ms=1e6, seed=7, device="cpu", config=QUICK_STALL, threads=1)
    assert once.stats["stop"] == "stall" and once.stats["restarts"] == []
    run = solve_ga(
        PROBLEM,
        budget_ms=400.0,
        seed=7,
        device="cpu",
        config=QUICK_STALL,
        threads=1,
        restarts=True,
    )
    restarts = run.stats["restarts"]
    assert len(restarts) >= 2
    assert [r["seed"] for r in restarts] == [
        restart_seed(7, k) for k in range(1, len(restarts) + 1)
    ]
    # Every run but the last stalled; the last one ran into the budget, or stalled with too
    # little of it left for another.
    assert all(r["stop"] == "stall" for r in restarts[:-1])
    last = restarts[-1]
    assert run.stats["stop"] == last["stop"]
    assert last["stop"] == "budget" or 400.0 - last["ms"] < ga_module.RESTART_MIN_MS + 1.0
    assert last["ms"] <= 400.0
    # The first run is the run without restarts; the answer is the best of them all.
    assert run.total == min(once.total, *(r["total"] for r in restarts))


def test_restarts_stop_at_a_proven_bound_and_without_a_budget():
    # A bound the first run meets: proven, nothing restarts.
    first = solve_ga(PROBLEM, seed=1, device="cpu", config=QUICK_STALL, threads=1)
    bounded = solve_ga(
        PROBLEM,
        budget_ms=5_000,
        seed=1,
        device="cpu",
        config=QUICK_STALL,
        threads=1,
        bound=first.total,
        restarts=True,
    )
    assert bounded.optimal and bounded.stats["stop"] == "bound"
    assert bounded.stats["restarts"] == []
    # No budget: a stall ends the run, restarts or not.
    free = solve_ga(PROBLEM, seed=1, device="cpu", config=QUICK_STALL, threads=1, restarts=True)
    assert free.stats["stop"] == "stall" and free.stats["restarts"] == []


@pytest.mark.cudasim
def test_restarts_are_the_same_on_both_devices(monkeypatch):
    """The restart loop is the driver's: the GPU GA (the simulator here) restarts from the same
    seeds and ends with the CPU twin's answer. One restart, whatever the clock (the simulator is
    slow)."""
    from gpu_engine.device import cuda_target_available

    if not cuda_target_available():
        pytest.skip("no CUDA target (GPU or simulator)")
    problem = CartProblem.from_dict(random_cart(2, 5, n_merchants=4, offers=(1, 4)))
    config = GaConfig(population=4, stall_generations=1, elite_ls_steps=1, child_ls_steps=1)
    answers = {}
    for device in ("cpu", "gpu"):
        left = iter([100.0])
        monkeypatch.setattr(
            ga_module, "_left_ms", lambda started, budget, left=left: next(left, 0.0)
        )
        run = solve_ga(
            problem, budget_ms=1e7, seed=4, device=device, config=config, threads=1, restarts=True
        )
        answers[device] = (run.total, [(r["seed"], r["total"]) for r in run.stats["restarts"]])
    assert len(answers["cpu"][1]) == 1
    assert answers["gpu"] == answers["cpu"]
