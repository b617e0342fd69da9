"""One rate limit for starting improve-cart runs, whichever way the shopper asks (REST API or
the web page's button), counted in Django's cache so every web process shares it (Redis in a
deployment, see ``CACHES``).

The rate is the API's ``optimize`` throttle rate (``REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]``,
env ``OPTIMIZE_THROTTLE_RATE``): one number for the one action. DRF's throttle still guards
the API view itself; this limit also covers the web UI, and anonymous shoppers by cart.

A fixed window, counted by ``storefront.security.ratelimit.throttle_rate_check``.
"""

from storefront.security.ratelimit import throttle_rate_check


def improve_rate_check(*, ident: str) -> None:
    """Counts one improve-cart request of ``ident`` (``user:<id>`` or ``cart:<id>``); raises
    ``Throttled`` (429) with the seconds until the window ends once the rate is used up."""
    throttle_rate_check(
        scope="optimize",
        key=f"smartcart:improve:{ident}",
        too_often="You asked to improve your cart too often.",
        # Redis down: counted per process. The broker is that Redis, so only carts small
        # enough to solve in the request can be improved meanwhile: bounded work.
        on_outage="local",
    )
