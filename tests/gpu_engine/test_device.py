"""One device resolver for every kernel family."""

import pytest

import gpu_engine.device
from gpu_engine.catalog.cheapest_offer.select import cheapest_offer_device
from gpu_engine.catalog.radix.tree import radix_tree_device
from gpu_engine.device import resolve_device


@pytest.mark.parametrize("resolver", [resolve_device, cheapest_offer_device, radix_tree_device])
def test_auto_follows_gpu_available_and_explicit_choices_stand(resolver, monkeypatch):
    monkeypatch.setattr(gpu_engine.device, "gpu_available", lambda: False)
    assert resolver("auto") == "cpu"
    monkeypatch.setattr(gpu_engine.device, "gpu_available", lambda: True)
    assert resolver("auto") == "cuda"
    assert resolver("cpu") == "cpu"
    assert resolver("cuda") == "cuda" and resolver("gpu") == "cuda"
    with pytest.raises(ValueError, match="device must be"):
        resolver("tpu")


def test_auto_never_picks_the_simulator():
    # The simulator is no GPU: gpu_available() is False there (tests run in it).
    assert resolve_device("auto") == "cpu"
