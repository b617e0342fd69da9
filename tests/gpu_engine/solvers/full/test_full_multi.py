"""Full search split over several GPUs: the threads share nothing on a device (each
copies the problem and allocates its outputs on its own), a thread whose launch was refused
after another GPU's thread switched the pricing form retries instead of failing, and on two
real GPUs the split answers as one GPU does (gpu-marked, skipped with fewer)."""

import pytest
from numba.core.errors import NumbaError

from gpu_engine import CartProblem, pricing
from gpu_engine.bench.instances import uniform_cart
from gpu_engine.layout import full_search_layout
from gpu_engine.reference import reference_brute_force
from gpu_engine.solvers.full import cuda as full_cuda


def _cart() -> dict:
    return {
        "items": [{"id": f"i{i}", "quantity": 1 + i % 2} for i in range(4)],
        "merchants": [
            {"id": f"m{m}", "shipping": {"base_fee": 199, "per_extra_unit": 50, "free_over": 3000}}
            for m in range(3)
        ],
        "offers": [
            {"item": f"i{i}", "merchant": f"m{m}", "price": 410 + 53 * ((i * 3 + m * 5) % 7)}
            for i in range(4)
            for m in range(3)
        ],
    }


@pytest.mark.cudasim
def test_a_launch_refused_after_another_thread_switched_the_pricing_form_retries(monkeypatch):
    cart = _cart()
    layout = full_search_layout(CartProblem.from_dict(cart))
    monkeypatch.setitem(pricing._device_variant, "name", "njit")
    real = full_cuda._launch
    refused: list[str] = []

    def launch(*args):
        if not refused:
            # Another GPU's thread was refused first and switched the form; this launch,
            # built with the old form, is refused too.
            refused.append(pricing.device_pricing_variant())
            pricing.device_pricing_fallback()
            raise NumbaError("this numba-cuda cannot call the njit dispatcher")
        return real(*args)

    monkeypatch.setattr(full_cuda, "_launch", launch)
    total, _index, _rows = full_cuda.search_rows(layout)
    assert refused == ["njit"] and pricing.device_pricing_variant() == "cuda.jit(py_func)"
    assert total == reference_brute_force(cart)[0]


def test_a_refusal_in_the_form_already_switched_to_is_raised(monkeypatch):
    layout = full_search_layout(CartProblem.from_dict(_cart()))
    monkeypatch.setitem(pricing._device_variant, "name", "cuda.jit(py_func)")

    def launch(*args):
        raise NumbaError("refused in both forms")

    monkeypatch.setattr(full_cuda, "_launch", launch)
    with pytest.raises(NumbaError):
        full_cuda.search_rows(layout)


@pytest.mark.gpu
def test_two_gpus_split_the_rows_and_answer_as_one_gpu():
    from numba import cuda

    if len(cuda.gpus) < 2:
        pytest.skip(f"needs 2 GPUs, {len(cuda.gpus)} visible")
    problem = CartProblem.from_dict(uniform_cart(9, 6, 20, seed=5))
    one = full_cuda.solve_gpu_full(problem)
    for ids in ([0, 1], [0, 1, 0, 1]):
        split = full_cuda.solve_gpu_full(problem, device_ids=ids)
        assert (split.total, split.assignment) == (one.total, one.assignment) and split.optimal
    # Each GPU searched its own half: the halves' minimum is the whole search's.
    layout = full_search_layout(problem)
    n_rows = layout.complexity // full_cuda.row_size(layout)
    halves = []
    for device_id, (lo, hi) in enumerate([(0, n_rows // 2), (n_rows // 2, n_rows)]):
        with cuda.gpus[device_id]:
            halves.append(full_cuda.search_rows(layout, start_row=lo, stop_row=hi)[:2])
    assert min(halves) == full_cuda.search_rows(layout)[:2]
