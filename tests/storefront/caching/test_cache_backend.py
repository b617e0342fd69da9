"""The Redis cache backend keeps one redis-py client per server instead of one per call."""

from storefront.caching.backend import SharedClientRedisCache


def test_one_client_per_pool_reused():
    cache = SharedClientRedisCache("redis://127.0.0.1:6379/15", {})
    client = cache._cache.get_client()
    assert cache._cache.get_client(write=True) is client
    assert client.connection_pool is cache._cache._pools[0]


def test_reads_keep_spreading_over_replicas():
    servers = "redis://127.0.0.1:6379/15,redis://127.0.0.2:6379/15,redis://127.0.0.3:6379/15"
    cache = SharedClientRedisCache(servers, {})
    readers = {id(cache._cache.get_client()) for _ in range(60)}
    assert len(readers) == 2
    assert cache._cache.get_client(write=True) not in (
        cache._cache._shared_clients[1],
        cache._cache._shared_clients[2],
    )
    for index, client in cache._cache._shared_clients.items():
        assert client.connection_pool is cache._cache._pools[index]
