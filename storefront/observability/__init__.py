"""Operations: health checks, Prometheus collectors, the worker heartbeat, error tracking."""
