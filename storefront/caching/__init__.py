"""Caching in one place: the shared cache helpers, the Redis backend, the page-cache
middleware, versioned keys and their bumps, shared fragments."""
