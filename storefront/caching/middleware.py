"""Whole cached responses for visitors with nothing of their own, served before the session,
CSRF, auth, messages and axes middlewares run: one Redis round trip per hit.

A request is *shared* when it is a GET or HEAD with no session cookie, no messages cookie and
no ``Authorization`` header (a first visit, a crawler, a load test, an API client without a
token): what it is shown depends only on its URL. The pages and API lists that every shopper
sees alike (``render_shared_page`` in ``storefront.caching.fragments``, ``CachedListMixin`` in
``storefront.caching.api``) hand their response to this middleware on a miss
(``shared_response_offer``); it stores it as a ``PageEntry`` under a key made of the URL only
(scheme, host, path, query string; the ``Accept`` header under ``/api/``, where DRF
negotiates the format) together with the version tokens (``storefront.caching.versions``) the
view read *before* it read the database.

A later shared request for the URL reads, in one ``MGET``, the entry and the current tokens
of the versions it was rendered under (this process remembers which versions each URL
depends on), and is served only when every token is still the same: a writer replaces a
token after its commit, so an entry never outlives a change it does not show (the same
guarantee as the versioned fragment keys). Each process also keeps its own copy of the
entries it served last (``PAGE_CACHE_LOCAL_ENTRIES``, default 256): a hit then reads only the
tokens, checked against the copy's exactly as against the shared entry, instead of moving
the whole page (tens of KB) out of Redis on every request; a copy lives no longer than the
shared entry's TTL. Anything else (a missing or stale entry, a URL this process has not seen
yet, the cache down) goes down the chain to the view.

The entry keeps the headers the chain gave the response (content type, ``X-Frame-Options``,
``Vary``, ``Allow``, ``ETag`` ...): middlewares outside this one (security headers, metrics,
whitenoise) still run on every hit; those inside must not add anything per request. The
one per-request part of a shared page, the CSRF token of its forms, is a marker in the entry
filled by Django's own CSRF middleware code (the cookie's secret reused, or a new one and its
cookie set), exactly as ``{% csrf_token %}`` would. ``If-None-Match`` / ``If-Modified-Since``
answer 304 from the entry's ``ETag`` / ``Last-Modified`` (the catalog API's lists).

Place it right after ``WhiteNoiseMiddleware``. ``PAGE_CACHE=0`` turns it off.
"""

import hashlib
import logging
import os
import time
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.messages.storage.cookie import CookieStorage
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, CsrfViewMiddleware
from django.utils.http import parse_etags, parse_http_date_safe
from prometheus_client import Counter

from storefront.caching.versions import VERSION_KEY_PREFIX, page_cache_enabled, page_cache_ttl

logger = logging.getLogger(__name__)

# The CSRF token's place in a shared page: ``{% csrf_token %}`` renders this while a shared
# page or fragment is rendered, and each response gets its own token in its place.
CSRF_MARKER = "csrfSHAREDFRAGMENTmarker"
_CSRF_MARKER_BYTES = CSRF_MARKER.encode()
_KEY_PREFIX = "pe:"
_API_PREFIX = "/api/"
# Headers of the stored response that are this response's own, not the page's.
_NOT_STORED = frozenset({"content-length", "set-cookie", "date"})
# URLs whose versions this process knows; forgotten all at once past this many.
_MEMO_MAX = 20_000

_requests = Counter(
    "storefront_page_cache_requests",
    "Shared requests (no session, no token) by how the page cache answered them.",
    ["result"],
)
_HIT = _requests.labels("hit")
_MISS = _requests.labels("miss")


class PageEntry(NamedTuple):
    tokens: tuple[tuple[str, str], ...]  # (version name, token) it was rendered under
    headers: dict[str, str]
    body: bytes
    csrf: bool  # the body holds CSRF_MARKER
    etag: str | None
    last_modified: int | None
    # When the shared entry expires (``time.time()``; 0: unknown, an entry from before this
    # field): a process's copy lives no longer.
    expires_at: float = 0.0


class SharedLookup:
    """What the middleware learned about a shared request, for the view below it."""

    __slots__ = ("body", "key", "names")

    def __init__(self, key: str) -> None:
        self.key = key
        # Set by the view (shared_response_offer): the versions its response shows, and the
        # body to store when it is not the response's own (a page's unfilled markup).
        self.names: tuple[str, ...] | None = None
        self.body: bytes | None = None


# URL key -> the version names its entry was rendered under (plain dict: every operation used
# is atomic under the GIL, and a lost update only costs one render).
_names: dict[str, tuple[str, ...]] = {}


# URL key -> this process's copy of its entry, oldest first (insertion order), at most
# ``PAGE_CACHE_LOCAL_ENTRIES``. A copy is only ever served after the same token check as a
# shared entry, so a stale copy costs one more round trip, never a stale page.
# The deadline (``time.time()``) is the shared entry's own expiry: what bounds a page whose
# bump the cache missed (down while a writer committed) bounds the copy too.
_local: dict[str, tuple["PageEntry", float]] = {}
# Pages larger than this are read from Redis on every hit instead of copied (a few large API
# lists must not fill each process's memory).
_LOCAL_MAX_BYTES = 512 * 1024


def page_cache_memo_clear() -> None:
    """Forgets which versions each URL depends on and this process's copies of entries
    (tests; the next hit of each renders)."""
    _names.clear()
    _local.clear()


def _clock() -> float:
    """Wall-clock seconds: entries' expiries are compared across processes."""
    return time.time()


def _local_limit() -> int:
    return int(getattr(settings, "PAGE_CACHE_LOCAL_ENTRIES", 256))


def _local_keep(key: str, entry: "PageEntry") -> None:
    limit = _local_limit()
    if limit <= 0 or len(entry.body) > _LOCAL_MAX_BYTES:
        return
    _local.pop(key, None)
    while len(_local) >= limit:
        try:
            del _local[next(iter(_local))]
        except (KeyError, StopIteration, RuntimeError):  # another thread evicted it first
            break
    now = _clock()
    expires = now + page_cache_ttl()
    if entry.expires_at:
        expires = min(expires, entry.expires_at)
    _local[key] = (entry, expires)


def request_is_shared(request: HttpRequest) -> bool:
    """A GET or HEAD with nothing of the visitor's own: no session, messages or token."""
    if request.method not in ("GET", "HEAD"):
        return False
    cookies = request.COOKIES
    return (
        settings.SESSION_COOKIE_NAME not in cookies
        and CookieStorage.cookie_name not in cookies
        and "HTTP_AUTHORIZATION" not in request.META
    )


def shared_lookup(request: HttpRequest) -> SharedLookup | None:
    """The middleware's record of this request when it is shared, else ``None``."""
    return getattr(request, "_shared_lookup", None)


def shared_response_offer(
    request: HttpRequest, *, names: tuple[str, ...], body: bytes | None = None
) -> bool:
    """Asks the middleware to store this request's response (if it ends 200, with no cookie
    but the CSRF one) under ``names``, whose tokens the view read through
    ``storefront.caching.fragments`` before reading the database. ``body``: what to store
    instead of the response's own (a page's markup with the CSRF marker). False when the
    request is not shared (the view renders for this visitor alone)."""
    lookup = shared_lookup(request)
    if lookup is None:
        return False
    lookup.names = names
    lookup.body = body
    return True


def _url_key(request: HttpRequest) -> str:
    path = request.path
    parts = [request.scheme, request.get_host(), path, request.META.get("QUERY_STRING", "")]
    if path.startswith(_API_PREFIX):
        parts.append(request.META.get("HTTP_ACCEPT", ""))
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).hexdigest()
    return _KEY_PREFIX + digest


_CSRF_INDEX = {char: index for index, char in enumerate(CSRF_ALLOWED_CHARS)}
_CSRF_BASE = len(CSRF_ALLOWED_CHARS)
# Random bytes at or above this are drawn again: below it every character is equally likely.
_CSRF_BYTE_LIMIT = 256 - 256 % _CSRF_BASE


def _csrf_random(count: int) -> str:
    chars: list[str] = []
    while len(chars) < count:
        chars.extend(
            CSRF_ALLOWED_CHARS[byte % _CSRF_BASE]
            for byte in os.urandom(count + 8)
            if byte < _CSRF_BYTE_LIMIT
        )
    return "".join(chars[:count])


def csrf_token_get(request: HttpRequest) -> str:
    """``django.middleware.csrf.get_token``'s token, in its format (a random mask and the
    secret ciphered with it; the cookie's secret, else a new one and its cookie), drawn from
    one ``os.urandom`` call: Django draws each of the 64 characters a cookie-less visitor needs
    with a system call of its own, most of what a cached page's hit costs. After
    ``CsrfViewMiddleware.process_request``; its ``process_response`` sets the cookie."""
    secret = request.META.get("CSRF_COOKIE")
    if secret is None:
        drawn = _csrf_random(2 * CSRF_SECRET_LENGTH)
        secret, mask = drawn[:CSRF_SECRET_LENGTH], drawn[CSRF_SECRET_LENGTH:]
        request.META["CSRF_COOKIE"] = secret
    else:
        mask = _csrf_random(CSRF_SECRET_LENGTH)
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True
    index = _CSRF_INDEX
    cipher = "".join(
        CSRF_ALLOWED_CHARS[(index[s] + index[m]) % _CSRF_BASE]
        for s, m in zip(secret, mask, strict=True)
    )
    return mask + cipher


def not_modified(request: HttpRequest, *, etag: str | None, last_modified: int | None) -> bool:
    """Whether a conditional GET still matches (``If-None-Match`` first, as RFC 9110 says)."""
    if_none_match = request.META.get("HTTP_IF_NONE_MATCH")
    if if_none_match:
        etags = parse_etags(if_none_match)
        return "*" in etags or (etag is not None and etag in etags)
    since = parse_http_date_safe(request.META.get("HTTP_IF_MODIFIED_SINCE", ""))
    return since is not None and last_modified is not None and last_modified <= since


class PageCacheMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response
        # Django's own CSRF cookie handling, for the one per-request part of a shared page.
        self._csrf = CsrfViewMiddleware(get_response)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request_is_shared(request) or not page_cache_enabled():
            return self.get_response(request)
        key = _url_key(request)
        names = _names.get(key)
        if names is not None:
            found = self._lookup(key, names)
            if found is not None:
                entry, tokens = found
                if entry is not None:
                    response = self._serve(request, entry)
                    if response is not None:
                        _HIT.inc()
                        return response
                # Read before the view reads the database: it renders under these.
                request._page_cache_versions = tokens  # type: ignore[attr-defined]
        _MISS.inc()
        lookup = SharedLookup(key)
        request._shared_lookup = lookup  # type: ignore[attr-defined]
        response = self.get_response(request)
        if lookup.names is not None:
            _store(request, response, lookup)
        return response

    @staticmethod
    def _lookup(key: str, names: tuple[str, ...]) -> tuple[PageEntry | None, dict[str, str]] | None:
        """A fresh entry for ``key`` (None: render) and the tokens read; ``None`` when the
        cache fails. This process's copy costs a read of the tokens alone; a stale or missing
        copy, a read of the shared entry with them."""
        copy, deadline = _local.get(key, (None, 0.0))
        if copy is not None and _clock() < deadline:
            read = _fetch(None, names)
            if read is None:
                return None
            _, tokens = read
            if _fresh(copy, tokens):
                return copy, tokens
        if copy is not None:
            _local.pop(key, None)
        found = _fetch(key, names)
        if found is None:
            return None
        entry, tokens = found
        if entry is None or not _fresh(entry, tokens):
            return None, tokens
        _local_keep(key, entry)
        return entry, tokens

    def _serve(self, request: HttpRequest, entry: PageEntry) -> HttpResponse | None:
        conditional = entry.etag is not None or entry.last_modified is not None
        if conditional and not_modified(
            request, etag=entry.etag, last_modified=entry.last_modified
        ):
            response: HttpResponse = HttpResponseNotModified()
            for name, value in entry.headers.items():
                if name != "Content-Type":
                    response.headers[name] = value
            return response
        body = entry.body
        if entry.csrf:
            if settings.CSRF_USE_SESSIONS:
                return None  # the token lives in the session: the chain makes it
            self._csrf.process_request(request)
            body = body.replace(_CSRF_MARKER_BYTES, csrf_token_get(request).encode())
        response = HttpResponse(body, headers=entry.headers)
        response.headers["Content-Length"] = str(len(body))
        if entry.csrf:
            self._csrf.process_response(request, response)
        return response


def _fetch(
    key: str | None, names: tuple[str, ...]
) -> tuple[PageEntry | None, dict[str, str]] | None:
    """The entry under ``key`` (``None``: the tokens alone, for this process's copy) and the
    current tokens of ``names``, in one round trip; ``None`` when the cache fails."""
    keys = [VERSION_KEY_PREFIX + name for name in names]
    try:
        found = cache.get_many(keys if key is None else [key, *keys])
    except Exception:
        logger.warning("page cache: read failed, rendering", exc_info=True)
        return None
    entry = found.pop(key, None) if key is not None else None
    start = len(VERSION_KEY_PREFIX)
    tokens = {version_key[start:]: token for version_key, token in found.items()}
    return (entry if isinstance(entry, PageEntry) else None), tokens


def _fresh(entry: PageEntry, tokens: dict[str, str]) -> bool:
    return bool(entry.tokens) and all(tokens.get(name) == token for name, token in entry.tokens)


def _store(request: HttpRequest, response: HttpResponse, lookup: SharedLookup) -> None:
    names = lookup.names or ()
    if response.status_code != 200 or response.streaming or not names:
        return
    if any(name != settings.CSRF_COOKIE_NAME for name in response.cookies):
        return  # something of the visitor's own after all (a session begun)
    read: dict[str, Any] = getattr(request, "_page_cache_versions", None) or {}
    if any(name not in read for name in names):
        return
    body = lookup.body if lookup.body is not None else response.content
    headers = {name: value for name, value in response.items() if name.lower() not in _NOT_STORED}
    entry = PageEntry(
        tokens=tuple((name, read[name]) for name in names),
        headers=headers,
        body=body,
        # Only a page's markup holds the marker (an API body is the visitor's data as is).
        csrf=lookup.body is not None and _CSRF_MARKER_BYTES in body,
        etag=response.get("ETag"),
        last_modified=parse_http_date_safe(response.get("Last-Modified", "")),
        expires_at=_clock() + page_cache_ttl(),
    )
    try:
        cache.set(lookup.key, entry, timeout=page_cache_ttl())
    except Exception:
        logger.warning("page cache: write failed", exc_info=True)
        return
    _local_keep(lookup.key, entry)
    if len(_names) >= _MEMO_MAX:
        _names.clear()
    _names[lookup.key] = names
