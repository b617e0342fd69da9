"""Reading settings from the environment: the helpers every settings module uses."""

import os


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


# Redis, when there is one: the shared cache and Celery's broker.
REDIS_URL = os.environ.get("REDIS_URL", "")
