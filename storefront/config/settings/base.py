"""Settings read from the environment (twelve-factor).

With no ``DATABASE_URL`` the shop runs on SQLite and with no ``REDIS_URL`` Celery
tasks run in-process: the embedded default that ``make demo`` uses. No secret has a
default outside DEBUG.
"""

import json
import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp.constants import NONCE, NONE, SELF, UNSAFE_INLINE
from django.core.exceptions import ImproperlyConfigured

from storefront.config.settings.env import REDIS_URL, env_bool, env_list

BASE_DIR = Path(__file__).resolve().parents[3]


DEBUG = env_bool("DEBUG")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "insecure-debug-only-key-never-use-in-production"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

INSTALLED_APPS = [
    # django.contrib.admin whose admin.site can ask staff for a one-time password.
    "storefront.security.admin_site.StaffAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    # Search on PostgreSQL: the full-text and trigram lookups (inert on SQLite).
    "django.contrib.postgres",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "payments",
    "storefront",
    "storefront.outbox",
    "smartcart",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Above the page cache, so that cached pages get the Content-Security-Policy header too.
    "csp.middleware.CSPMiddleware",
    # Whole cached pages and API lists for visitors with no session, cookie of their own or
    # token, in one Redis round trip, before the middlewares below run (nothing below may add
    # a per-request header to such a response): storefront/caching/middleware.py.
    "storefront.caching.middleware.PageCacheMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # The shop's own 404 page with DEBUG too (the demo), never Django's list of every URL.
    "storefront.web.not_found.BrandedNotFoundMiddleware",
]

ROOT_URLCONF = "storefront.config.urls"
WSGI_APPLICATION = "storefront.config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "storefront.web.context_processors.shop",
                "smartcart.pricewatch.web.price_watch",
            ],
        },
    },
    {
        # Only the rows a page repeats many times (storefront/web/jinja.py says why).
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "storefront.web.jinja.environment"},
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "60")),
        conn_health_checks=True,
    )
}
# PostgreSQL's JIT compiles a query's expressions once its estimated cost is high. The
# catalog's queries (correlated subqueries, estimated per row) cross that line and would spend
# seconds compiling to save milliseconds. Off unless POSTGRES_JIT=1.
if DATABASES["default"].get("ENGINE") == "django.db.backends.postgresql" and not env_bool(
    "POSTGRES_JIT"
):
    _pg_options = DATABASES["default"].setdefault("OPTIONS", {})
    _pg_options["options"] = f"{_pg_options.get('options', '')} -c jit=off".strip()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "catalog"
LOGOUT_REDIRECT_URL = "catalog"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))
MEDIA_URL = "media/"

# One currency per deployment; every amount in the database is integer minor units (cents).
SHOP_CURRENCY = os.environ.get("SHOP_CURRENCY", "EUR")

# --- Checkout and payment ---------------------------------------------------------------
# django-payments: the dummy provider (a form on this site that says "paid" or "rejected")
# unless PAYMENT_PROVIDER names a real one, e.g. "payments.stripe.StripeProviderV3" with
# PAYMENT_PROVIDER_OPTIONS='{"api_key": "...", "endpoint_secret": "..."}' (see README).
PAYMENT_MODEL = "storefront.Payment"
PAYMENT_HOST = os.environ.get("PAYMENT_HOST", "localhost:8000")
PAYMENT_USES_SSL = env_bool("PAYMENT_USES_SSL", not DEBUG)
PAYMENT_VARIANTS = {
    "default": (
        os.environ.get("PAYMENT_PROVIDER", "payments.dummy.DummyProvider"),
        json.loads(os.environ.get("PAYMENT_PROVIDER_OPTIONS", "{}")),
    )
}
# An order not paid this long after it was placed fails and gives its stock back.
ORDER_PAYMENT_TIMEOUT_S = int(os.environ.get("ORDER_PAYMENT_TIMEOUT_S", "1800"))
# Before the review, the cart is checked once more for a cheaper assignment on this budget
# (through STOREFRONT_CART_OPTIMIZER below).
CHECKOUT_OPTIMIZE_BUDGET_MS = int(os.environ.get("CHECKOUT_OPTIMIZE_BUDGET_MS", "300"))

# --- Search -------------------------------------------------------------------------------
# PostgreSQL's text search configuration (stemming, stop words) for product search. The full
# text index is built with the value migrations ran with: after changing it, rebuild the
# index with `python manage.py search_index_rebuild`.
SEARCH_CONFIG = os.environ.get("SEARCH_CONFIG", "english")

# --- Cache --------------------------------------------------------------------------------
# Throttles and rate limits must be shared by every web process: Redis when there is one.
if REDIS_URL:
    CACHES = {
        "default": {
            # Short timeouts and a circuit breaker: an outage is CacheUnavailable, never a hang
            # (storefront.caching.cache); each rate limit picks its direction
            # (storefront.security.ratelimit).
            # One redis-py client per pool, not per operation (storefront.caching.backend).
            "BACKEND": "storefront.caching.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "smartcart",
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# What every shopper sees alike (catalog, search and product fragments, the catalog API's
# lists) is rendered once into this cache under versioned keys (storefront/caching/versions.py);
# whole pages and lists for visitors with nothing of their own are served from it by
# storefront.caching.middleware.PageCacheMiddleware (one round trip per hit).
# PAGE_CACHE=0 renders everything per request (benchmarks: the uncached figures);
# PAGE_CACHE_TTL bounds how long an entry lives (and what a cache that missed version bumps
# while it was unreachable can still serve).
PAGE_CACHE = env_bool("PAGE_CACHE", True)
PAGE_CACHE_TTL = int(os.environ.get("PAGE_CACHE_TTL", "600"))
# Whole pages each process keeps a copy of (checked against the shared tokens on every hit,
# like the shared entry); 0 reads every hit's page from Redis.
PAGE_CACHE_LOCAL_ENTRIES = int(os.environ.get("PAGE_CACHE_LOCAL_ENTRIES", "256"))
# The catalog's queries are compiled to SQL once per shape and process
# (storefront/catalog/sql_shapes.py), not per request; SQL_SHAPES=0 compiles every query
# afresh (a switch for a suspected bug).
SQL_SHAPES = env_bool("SQL_SHAPES", True)

from storefront.config.settings.celery import *  # noqa: E402, F403
from storefront.config.settings.outbox import *  # noqa: E402, F403
from storefront.config.settings.payments import *  # noqa: E402, F403

CELERY_BEAT_SCHEDULE.update(PAYMENT_BEAT_SCHEDULE)  # noqa: F405

# --- Storefront extension points (dotted paths; storefront never imports the apps above it) ---
# Providers of panels on the cart page, in order (storefront.web.cart_panels).
STOREFRONT_CART_PANELS = [
    "smartcart.pricewatch.web.price_watch_cart_panels",
    "smartcart.web.panels.improve_cart_panels",
]
# Fields other apps add to the API's cart resource (storefront.api.cart_fields), in order.
STOREFRONT_CART_API_FIELDS = ["smartcart.pricewatch.apis.price_watch_cart_fields"]
# "Find a cheaper assignment for this cart" (storefront.carts.optimizer); empty: none.
STOREFRONT_CART_OPTIMIZER = "smartcart.optimizer.cart_cheaper_assignment"

from storefront.config.settings.smartcart import *  # noqa: E402, F403

# --- Catalog jobs (feed import, stored cheapest offers) --------------------------------------
# They run on the cpu queue, whose prefork workers must never open a CUDA context: the
# kernels use their CPU twins unless these are routed to gpu workers ("gpu" queue, "auto").
OFFER_IMPORT_QUEUE = os.environ.get("OFFER_IMPORT_QUEUE", "cpu")
OFFER_IMPORT_DEVICE = os.environ.get("OFFER_IMPORT_DEVICE", "cpu")
OFFER_IMPORT_TIME_LIMIT_S = int(os.environ.get("OFFER_IMPORT_TIME_LIMIT_S", "3600"))
OFFER_IMPORT_BATCH_SIZE = int(os.environ.get("OFFER_IMPORT_BATCH_SIZE", "50000"))
OFFER_IMPORT_WRITERS = int(os.environ.get("OFFER_IMPORT_WRITERS", "2"))
OFFER_IMPORT_MAX_BYTES = int(os.environ.get("OFFER_IMPORT_MAX_BYTES", str(1024**3)))
# A worker needs about 1.2 GB of memory per million rows.
OFFER_IMPORT_MAX_ROWS = int(os.environ.get("OFFER_IMPORT_MAX_ROWS", "5000000"))
# A running job whose heartbeat is older than this is taken for dead and may be resumed.
OFFER_IMPORT_STALE_AFTER_S = int(os.environ.get("OFFER_IMPORT_STALE_AFTER_S", "300"))
STOREFRONT_CHEAPEST_QUEUE = os.environ.get("STOREFRONT_CHEAPEST_QUEUE", "cpu")
STOREFRONT_CHEAPEST_DEVICE = os.environ.get("STOREFRONT_CHEAPEST_DEVICE", "cpu")
STOREFRONT_CHEAPEST_TIME_LIMIT_S = int(os.environ.get("STOREFRONT_CHEAPEST_TIME_LIMIT_S", "900"))
# Offer changes within this many seconds share one recompute.
STOREFRONT_CHEAPEST_DEBOUNCE_S = float(os.environ.get("STOREFRONT_CHEAPEST_DEBOUNCE_S", "2"))
STOREFRONT_CHEAPEST_CHUNK = int(os.environ.get("STOREFRONT_CHEAPEST_CHUNK", "50000"))
STOREFRONT_CHEAPEST_DRAIN_S = float(os.environ.get("STOREFRONT_CHEAPEST_DRAIN_S", "300"))
# Where the shipping-zone index (pricing many carts) builds and matches its radix tree: web
# processes and cpu workers use it, so the CPU twin unless a gpu worker does the pricing.
STOREFRONT_ZONE_INDEX_DEVICE = os.environ.get("STOREFRONT_ZONE_INDEX_DEVICE", "cpu")

# --- REST API -----------------------------------------------------------------------------
# Stored answers of POSTs sent with an Idempotency-Key live this long
# (storefront.security.idempotency).
IDEMPOTENCY_KEY_TTL_S = int(os.environ.get("IDEMPOTENCY_KEY_TTL_S", str(24 * 3600)))
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    # A page that is asked for must exist: page=abc, page=last or one past the end is a 404.
    "DEFAULT_PAGINATION_CLASS": "storefront.api.pagination.StrictPageNumberPagination",
    "PAGE_SIZE": 24,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "storefront.api.errors.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "storefront.api.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "optimize": os.environ.get("OPTIMIZE_THROTTLE_RATE", "30/min"),
        "token": os.environ.get("TOKEN_THROTTLE_RATE", "10/min"),
        # Placing orders, web and API (storefront.checkout.ratelimit): per account, or per
        # client address for guests.
        "order_place": os.environ.get("ORDER_PLACE_THROTTLE_RATE", "10/min"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Smart Cart API",
    "DESCRIPTION": (
        "Catalog, carts, Improve cart, checkout and orders for Smart Cart's mobile and web "
        "clients. The catalog is public; the cart, checkout and order endpoints are for "
        "signed-in callers only (token or session): guest checkout is on the web pages only."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
}

# --- E-mail -------------------------------------------------------------------------------
# The shop mails password-reset links. With DEBUG they are printed on the console, otherwise
# sent over SMTP; EMAIL_BACKEND overrides either (cookiecutter-django style). The password has
# no default: it comes from the environment only.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS")
# A cpu worker sends the mail (in-process without REDIS_URL): an SMTP server that does not
# answer must not hold it for the OS's TCP timeout (Django's default is no timeout at all).
EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT", "10"))
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Smart Cart <noreply@localhost>")
# Where shoppers write with questions (the checkout summary and order pages say it).
STOREFRONT_SUPPORT_EMAIL = os.environ.get("STOREFRONT_SUPPORT_EMAIL", "help@smartcart.example")

# --- Logging ------------------------------------------------------------------------------
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    # A 4xx (permission denied, CSRF failure, lockout) is one line; a 5xx keeps its traceback.
    "filters": {
        "client_errors": {"()": "storefront.observability.log_filters.ClientErrorWithoutTraceback"}
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["client_errors"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's request logger: filtered at the logger too, so every handler gets one line.
        "django.request": {"filters": ["client_errors"]},
        # Numba's CUDA driver logs every device allocation and free at INFO: thousands of
        # lines a minute from a gpu worker (seen on the lent H200), burying the task log.
        "numba": {"level": os.environ.get("NUMBA_LOG_LEVEL", "WARNING")},
    },
}

# --- Security (production) ----------------------------------------------------------------
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    SECURE_CONTENT_TYPE_NOSNIFF = True
    SECURE_REFERRER_POLICY = "same-origin"
    X_FRAME_OPTIONS = "DENY"

# --- Operations and edge security ---------------------------------------------------------
# Kept in one block: observability apps and middleware, login lockout, trusted proxies, the
# API's bounded JSON parsing, database connection bounds and the static files fallback.
INSTALLED_APPS += [
    "axes",
    "django_prometheus",
    "drf_spectacular_sidecar",
    "csp",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
]
MIDDLEWARE = [
    # Outermost: latency and status of every response, including those made below.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "storefront.security.middleware.ApiJsonErrorsMiddleware",
    *MIDDLEWARE,
    # After authentication: request.user.is_verified() for the admin (STAFF_TOTP_REQUIRED).
    "django_otp.middleware.OTPMiddleware",
    # Last, as django-axes requires: turns a flagged login into the lockout response.
    "axes.middleware.AxesMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]
AUTHENTICATION_BACKENDS = [
    "storefront.security.backends.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
]

# Addresses or networks of the reverse proxies in front of the app, comma-separated. Only a
# request whose direct peer is one of them has its X-Forwarded-For believed (see
# storefront.security.client_ip); empty: the peer's own address is the client.
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")

# Failed logins (web, admin, API token) are counted in the database per account and client
# address together, and per account alone; past the limit on either, logins to that account
# (from that address, or from anywhere) answer 429 with Retry-After until the cool-off ends.
# Per account: rotating addresses does not help a guesser. Never per address alone: one
# attacker behind a NAT must not lock everyone behind it out of their own accounts.
AXES_FAILURE_LIMIT = int(os.environ.get("LOGIN_FAILURE_LIMIT", "10"))
AXES_COOLOFF_TIME = timedelta(seconds=int(os.environ.get("LOGIN_LOCKOUT_S", "900")))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "username"]
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "storefront.security.client_ip.client_ip"
AXES_LOCKOUT_CALLABLE = "storefront.security.lockout.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429
# Successful logins are not logged row by row (the access log grows without bound).
AXES_DISABLE_ACCESS_LOG = True

# Content-Security-Policy (django-csp): everything from this site only, no inline scripts or
# style elements. A nonce is added only where a page uses one (Swagger UI's start-up script and
# style: templates/drf_spectacular/swagger_ui.html). Inline style *attributes* are allowed:
# the catalog's tiles set their colour as a CSS variable (style="--hue: ..."); an attribute
# cannot run script. Product pictures are SVG in data: URIs on <img> (where SVG runs no script).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF, NONCE],
        "style-src": [SELF, NONCE],
        "style-src-attr": [UNSAFE_INLINE],
        "img-src": [SELF, "data:"],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Staff sign in to the admin with a one-time password too (django-otp: an authenticator app's
# TOTP device, or `manage.py addstatictoken <user>` to get in the first time); see
# storefront.security.admin_site. Off by default, so the demo's admin works as it is.
STAFF_TOTP_REQUIRED = env_bool("STAFF_TOTP_REQUIRED")
OTP_TOTP_ISSUER = os.environ.get("OTP_TOTP_ISSUER", "Smart Cart")

# Anonymous forms a script could repeat, counted per client address (the order lookup also per
# order number asked for): storefront.security.form_limits. LOGIN_RATE covers the web and admin
# logins; the API's token endpoint has its "token" throttle. "N/second|minute|hour|day";
# empty: no limit.
LOGIN_RATE = os.environ.get("LOGIN_RATE", "30/minute")
SIGNUP_RATE = os.environ.get("SIGNUP_RATE", "10/hour")
ORDER_LOOKUP_RATE = os.environ.get("ORDER_LOOKUP_RATE", "20/hour")
ORDER_LOOKUP_NUMBER_RATE = os.environ.get("ORDER_LOOKUP_NUMBER_RATE", "10/hour")

# JSON bodies: Django's size limit also applies to the API's parser, plus a nesting limit.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("DATA_UPLOAD_MAX_MEMORY_SIZE", str(2_621_440)))
API_JSON_MAX_DEPTH = int(os.environ.get("API_JSON_MAX_DEPTH", "32"))
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = [
    "storefront.security.parsers.BoundedJSONParser",
    "rest_framework.parsers.FormParser",
    "rest_framework.parsers.MultiPartParser",
]
# Swagger UI from the app's own static files, not a CDN.
SPECTACULAR_SETTINGS.update(
    {
        "SWAGGER_UI_DIST": "SIDECAR",
        "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
        "REDOC_DIST": "SIDECAR",
        "POSTPROCESSING_HOOKS": [
            "drf_spectacular.hooks.postprocess_schema_enums",
            "storefront.api.schema_hooks.paginated_lists_document_invalid_page",
            "storefront.api.schema_hooks.every_operation_documents_uri_too_long",
            "storefront.api.schema_hooks.text_inputs_document_no_null_characters",
        ],
    }
)

# Database connections stay bounded in every server mode. On PostgreSQL each process keeps a
# pool (Django 5.2, psycopg_pool) of at most DB_POOL_MAX_SIZE connections; connections are
# returned to it after each request, so threads (runserver) never pin one each. CONN_MAX_AGE
# must be 0 with a pool. DB_POOL=0 falls back to CONN_MAX_AGE.
# With a pool, CONN_HEALTH_CHECKS makes Django pass psycopg_pool's check_connection as the
# pool's ``check``: each connection is checked (one round trip) as the pool hands it out, and
# one the server closed (a restart, a failover, pg_terminate_backend, an idle timeout) is
# replaced instead of reaching a request that would answer 500.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool("DB_POOL", True):
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": int(os.environ.get("DB_POOL_MIN_SIZE", "1")),
        "max_size": int(os.environ.get("DB_POOL_MAX_SIZE", "8")),
        "timeout": float(os.environ.get("DB_POOL_TIMEOUT_S", "10")),
    }

# Before collectstatic has run, pages still render (unhashed URLs served from the apps'
# folders) and the log says what to run, instead of every page answering 500.
if not DEBUG:
    STORAGES["staticfiles"]["BACKEND"] = (
        "storefront.config.staticstorage.ForgivingManifestStaticFilesStorage"
    )
    WHITENOISE_USE_FINDERS = not (STATIC_ROOT / "staticfiles.json").exists()

# Plain HTTP on loopback (make prod-local, the load test): SECURE_COOKIES=0 lets the session
# and CSRF cookies travel without TLS. Never in a deployment.
if not DEBUG and not env_bool("SECURE_COOKIES", True):
    SESSION_COOKIE_SECURE = False
    CSRF_COOKIE_SECURE = False

# Logs as one JSON object per line (LOG_FORMAT=json) for log shippers; plain text otherwise.
if os.environ.get("LOG_FORMAT", "plain").lower() == "json":
    from typing import Any, cast

    _logging = cast(dict[str, Any], LOGGING)
    _logging["formatters"]["json"] = {
        "()": "pythonjsonlogger.json.JsonFormatter",
        "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
        "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
    }
    _logging["handlers"]["console"]["formatter"] = "json"

# Health: a worker counts as alive while its heartbeat key is younger than this.
HEALTH_WORKER_HEARTBEAT_S = int(os.environ.get("HEALTH_WORKER_HEARTBEAT_S", "60"))
HEALTH_CHECK_WORKER = env_bool("HEALTH_CHECK_WORKER", bool(REDIS_URL))

# Error tracking, opt-in: set SENTRY_DSN (and optionally SENTRY_ENVIRONMENT,
# SENTRY_TRACES_SAMPLE_RATE). Nothing is sent without it.
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")
if SENTRY_DSN:
    from storefront.observability.sentry import sentry_init

    sentry_init(dsn=SENTRY_DSN)
# /metrics answers only clients in these networks (a scraper on the host or private network).
METRICS_ALLOWED_NETWORKS = env_list(
    "METRICS_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16"
)
