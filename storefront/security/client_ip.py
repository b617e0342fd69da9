"""The one answer to "which client sent this request", for axes, DRF throttles and the shop's
own rate limits alike.

``X-Forwarded-For`` is only believed when the direct peer (``REMOTE_ADDR``) is one of
``settings.TRUSTED_PROXIES`` (addresses or networks). The header is then read from the right:
each hop appended by a trusted proxy is skipped, and the first address a trusted proxy did
not add is the client. Whatever a client writes into the header itself sits further left and
is never reached, so rotating it changes nothing.
"""

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=8)
def _networks(trusted: tuple[str, ...]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in trusted)


def _parse(address: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(address.strip())
    except ValueError:
        return None


def _is_trusted(address: str) -> bool:
    parsed = _parse(address)
    if parsed is None:
        return False
    return any(parsed in network for network in _networks(tuple(settings.TRUSTED_PROXIES)))


def client_ip(request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR`` unless that is a trusted proxy, else the
    right-most ``X-Forwarded-For`` hop that no trusted proxy added."""
    # DRF's Request proxies META; axes may hand either kind of request.
    meta = request.META
    peer = meta.get("REMOTE_ADDR", "") or ""
    if not _is_trusted(peer):
        return peer
    hops = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    for hop in reversed([hop for hop in hops if hop]):
        if _parse(hop) is None:
            # A garbled hop was written by the client side: the proxy's peer is all we know.
            return peer
        if not _is_trusted(hop):
            return hop
    return peer
