"""Test settings: the base settings with a throwaway key and fast hashing.

``DATABASE_URL`` / ``REDIS_URL`` still choose PostgreSQL / Redis when set; unit tests run
tasks in-process, and the integration tests start a real worker themselves.
"""

import os
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "test-only-secret-key")
os.environ.setdefault("DEBUG", "0")
# pytest-django imports these settings (and Django apps, which may import numba) before
# tests/conftest.py runs, so the CUDA simulator switch must be set here too.
if os.environ.get("SMARTCART_REAL_GPU") != "1":
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
os.environ.setdefault(
    "GPU_ENGINE_PROFILE",
    str(Path(__file__).resolve().parents[3] / "gpu_engine" / "planning" / "default_profile.json"),
)

from storefront.config.settings.base import *  # noqa: F403

ALLOWED_HOSTS = ["*"]
SECURE_SSL_REDIRECT = False
SECURE_HSTS_SECONDS = 0
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
STORAGES["staticfiles"]["BACKEND"] = "django.contrib.staticfiles.storage.StaticFilesStorage"  # noqa: F405
# Each test process gets its own cache: concurrent runs on one Redis must not share throttles.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {  # noqa: F405
    "optimize": "1000/min",
    "token": "1000/min",
    "order_place": "1000/min",
}
