"""Load scenarios for the production-like stack (``make prod-local SEED=1``).

``Shopper``: an anonymous shopper on the web pages: the catalog, a search, a product page,
add to cart (two products), the cart, Improve cart (polling while it runs), apply, then a
guest checkout: the address form (a German address), the review, place the order, pay it
with django-payments' dummy provider and open the order page. Each visit starts a new
session, so carts stay shopper-sized. Shoppers compete for the same stock: a review whose
line sold out has no place button, so the shopper goes to the cart ("cart after a sold-out
review"), and a place refused because the cart changed since the review redirects to the
review, which the shopper reads ("review after a changed cart"). Both are right answers,
not failures, and real requests a browser would make, so the counts stay honest. Placing
orders is rate limited per client address: run the stack with ``ORDER_PLACE_THROTTLE_RATE``
raised (BENCHMARKS.md, "Issue 15").
``Trivial``: ``GET /health/live``, the cheapest request through the whole middleware stack:
the framework's ceiling.

Choose one with ``--class-picker`` or by naming it after the options: ``locust -f
loadtest/locustfile.py ... Shopper``. ``loadtest/run.py`` steps both through user counts.
"""

import random
import re

from locust import FastHttpUser, constant, task

PRODUCT_IDS = re.compile(r'name="product" value="(\d+)"')
PRODUCT_SLUGS = re.compile(r'href="/products/([^/"]+)/"')
APPLY_URL = re.compile(r'action="(/cart/improve/\d+/apply/)"')
POLL_URL = re.compile(r'data-poll-url="(/cart/improve/\d+/)"')
PLACE_FIELDS = re.compile(r'name="(review_token|idempotency_key)" value="([^"]+)"')
ADDRESS = {
    "email": "loadtest@example.com",
    "full_name": "Lotte Last",
    "address_line": "Invalidenstr. 117",
    "city": "Berlin",
    "postal_code": "10115",
    "country": "DE",
}
# The dummy provider's form: a confirmed, accepted payment without 3-D Secure.
PAID = {"status": "confirmed", "fraud_status": "accept", "gateway_response": "3ds-disabled"}
SEARCH_TERMS = ("phone", "cable", "book", "lamp", "pro", "mini", "kit", "set")


class Shopper(FastHttpUser):
    wait_time = constant(0)

    def _cookie(self, name: str) -> str:
        for cookie in self.client.cookiejar:
            if cookie.name == name:
                return cookie.value
        return ""

    def _post(self, url: str, data: dict, *, name: str, follow: bool = True):
        data = {**data, "csrfmiddlewaretoken": self._cookie("csrftoken")}
        return self.client.post(url, data=data, name=name, allow_redirects=follow)

    def _redirect(self, response, *, name: str, expected: str) -> str:
        """The Location of the 302 the step should answer, or "". A step that lands elsewhere
        (an empty cart sends back to the cart) is recorded as a failure; a 4xx already is."""
        location = response.headers.get("Location", "") if response.status_code == 302 else ""
        if expected not in location and response.status_code < 400:
            self.environment.events.request.fire(
                request_type="POST",
                name=f"{name}: no redirect",
                response_time=0,
                response_length=0,
                exception=AssertionError(f"{name}: {response.status_code} {location!r}"),
                context={},
            )
            return ""
        return location if expected in location else ""

    def _checkout(self) -> None:
        self.client.get("/checkout/", name="checkout address")
        address = self._post("/checkout/", ADDRESS, name="checkout address post", follow=False)
        if not self._redirect(address, name="checkout address post", expected="/review/"):
            return
        fields = dict(
            PLACE_FIELDS.findall(self.client.get("/checkout/review/", name="review").text)
        )
        if len(fields) < 2:  # a line sold out to another shopper: no place button
            self.client.get("/cart/", name="cart after a sold-out review")
            return
        placed = self._post("/checkout/place/", fields, name="place order", follow=False)
        back = placed.headers.get("Location", "") if placed.status_code == 302 else ""
        if back.endswith("/checkout/review/"):  # the cart changed since the review
            self.client.get(back, name="review after a changed cart")
            return
        pay_url = self._redirect(placed, name="place order", expected="/pay/")
        if not pay_url:
            return
        self.client.get(pay_url, name="pay page")
        paid = self._post(pay_url, PAID, name="pay", follow=False)
        order_url = self._redirect(paid, name="pay", expected="/orders/")
        if order_url:
            self.client.get(order_url, name="order page")

    @task
    def visit(self) -> None:
        self.client.cookiejar.clear()
        catalog = self.client.get("/", name="catalog").text
        products = PRODUCT_IDS.findall(catalog)
        slugs = PRODUCT_SLUGS.findall(catalog)
        self.client.get(f"/?q={random.choice(SEARCH_TERMS)}", name="search")
        if not products or not slugs:
            return
        self.client.get(f"/products/{random.choice(slugs)}/", name="product")
        for product in random.sample(products, k=min(2, len(products))):
            self._post("/cart/add/", {"product": product, "quantity": 1}, name="add to cart")
        self.client.get("/cart/", name="cart")
        page = self._post("/cart/improve/", {}, name="improve cart").text
        for _ in range(20):
            poll = POLL_URL.search(page)
            if poll is None:
                break
            page = self.client.get(
                poll.group(1), headers={"X-Requested-With": "fetch"}, name="improve status"
            ).text
        apply = APPLY_URL.search(page)
        if apply:
            self._post(apply.group(1), {}, name="apply")
        self._checkout()


class Trivial(FastHttpUser):
    wait_time = constant(0)

    @task
    def live(self) -> None:
        self.client.get("/health/live", name="trivial view")
