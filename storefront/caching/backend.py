"""Django's Redis cache with one redis-py client per connection pool instead of one per call.

``django.core.cache.backends.redis.RedisCacheClient.get_client`` builds a new ``redis.Redis``
for every cache operation, and each build fills its table of ~170 response callbacks: on a
page served from the cache (two or three operations) that was a measurable share of the
request. A ``redis.Redis`` is safe to share between threads (each command takes a connection
from the pool), so one per pool is kept.
"""

from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class SharedClientRedisCacheClient(RedisCacheClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shared_clients: dict[int, object] = {}

    def get_client(self, key=None, *, write=False):
        # django-stubs do not declare RedisCacheClient's private pool attributes.
        this: Any = self
        # Per pool: reads still spread over the replicas when several servers are listed.
        index = this._get_connection_pool_index(write)
        client = self._shared_clients.get(index)
        if client is None:
            if index not in this._pools:
                this._pools[index] = this._pool_class.from_url(
                    this._servers[index], **this._pool_options
                )
            pool = this._pools[index]
            client = self._shared_clients.setdefault(index, this._client(connection_pool=pool))
        return client


class SharedClientRedisCache(RedisCache):
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = SharedClientRedisCacheClient
