"""Fixtures shared by the storefront tests."""

import pytest


@pytest.fixture
def bumps(monkeypatch) -> list[set[str]]:
    """The page-cache version names of each ``cache_versions_bump`` (which still runs)."""
    import storefront.caching.versions as cache_versions

    recorded: list[set[str]] = []
    real = cache_versions.cache_versions_bump

    def bump(*, names):
        recorded.append(set(names))
        real(names=names)

    monkeypatch.setattr(cache_versions, "cache_versions_bump", bump)
    return recorded
