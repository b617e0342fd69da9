"""Custom Prometheus collectors registered once per process: an app's ``ready()`` can run more
than once (tests, management commands), and the registry refuses a second collector that
describes the same metric."""

from prometheus_client.registry import REGISTRY, Collector

_registered: set[type[Collector]] = set()


def collector_register_once(collector_class: type[Collector]) -> None:
    if collector_class not in _registered:
        REGISTRY.register(collector_class())
        _registered.add(collector_class)
