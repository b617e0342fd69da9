"""Catalog API lists rendered once for everyone: the JSON body is kept in the shared cache
under versioned keys (``storefront.caching.versions``) with its ETag and the time it was
rendered, and served as is; ``If-None-Match`` / ``If-Modified-Since`` answer 304. For a
request with no token or session the whole response is also kept by the page-cache
middleware (``storefront.caching.middleware``), which serves it before authentication runs.

Only the JSON rendering is cached (the browsable API renders normally). Errors (a bad filter)
raise before anything is stored. With the cache off or down the body is rendered per request,
and conditional requests still work (the ETag is the body's digest).
"""

import hashlib
import time
from dataclasses import dataclass

from django.http import HttpResponse, HttpResponseNotModified
from django.utils.http import http_date, quote_etag
from rest_framework import generics
from rest_framework.renderers import JSONRenderer

from storefront.caching.fragments import FragmentSpec, cached_value
from storefront.caching.middleware import not_modified, shared_response_offer
from storefront.caching.versions import CATALOG


@dataclass(frozen=True)
class CachedBody:
    body: bytes
    content_type: str
    etag: str
    last_modified: int


class CachedListMixin(generics.ListAPIView):
    """For list views whose answer depends only on the URL and the catalog."""

    cache_versions: tuple[str, ...] = (CATALOG,)

    # get(), not list(): a view may write its own list() (the products add their facets).
    def get(self, request, *args, **kwargs):
        renderer = getattr(request, "accepted_renderer", None)
        if not isinstance(renderer, JSONRenderer):
            return super().get(request, *args, **kwargs)

        def render() -> CachedBody:
            response = super(CachedListMixin, self).get(request, *args, **kwargs)
            body = renderer.render(response.data, renderer_context=self.get_renderer_context())
            digest = hashlib.sha1(body, usedforsecurity=False).hexdigest()
            return CachedBody(
                body=body,
                content_type=renderer.media_type,
                etag=quote_etag(digest),
                last_modified=int(time.time()),
            )

        spec = FragmentSpec(
            f"api:{type(self).__name__}", self.cache_versions, (request.get_full_path(),)
        )
        # Django's request, not DRF's wrapper: what is noted on it must reach the middleware.
        django_request = request._request
        entry = cached_value(spec, render, kind="pa", request=django_request)
        # A request with no token or session: the page-cache middleware keeps the whole
        # response and serves the next one before authentication runs.
        shared_response_offer(django_request, names=self.cache_versions)
        headers = {"ETag": entry.etag, "Last-Modified": http_date(entry.last_modified)}
        response: HttpResponse
        if not_modified(request, etag=entry.etag, last_modified=entry.last_modified):
            response = HttpResponseNotModified()
        else:
            response = HttpResponse(entry.body, content_type=entry.content_type)
        for name, value in {**headers, "Vary": "Accept", "Cache-Control": "no-cache"}.items():
            response[name] = value
        return response
