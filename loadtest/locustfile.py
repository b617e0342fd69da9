"""Load scenarios for the production-like stack (``make prod-local SEED=1``).

``Shopper``: an anonymous shopper on the web pages: the catalog, a search, a product page,
add to cart (two products), the cart, Improve cart (polling while it runs), apply. Each
visit starts a new session, so carts stay shopper-sized. ``Trivial``: ``GET /health/live``,
the cheapest request through the whole middleware stack: the framework's ceiling.

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
SEARCH_TERMS = ("phone", "cable", "book", "lamp", "pro", "mini", "kit", "set")


class Shopper(FastHttpUser):
    wait_time = constant(0)

    def _cookie(self, name: str) -> str:
        for cookie in self.client.cookiejar:
            if cookie.name == name:
                return cookie.value
        return ""

    def _post(self, url: str, data: dict, *, name: str):
        data = {**data, "csrfmiddlewaretoken": self._cookie("csrftoken")}
        return self.client.post(url, data=data, name=name, allow_redirects=True)

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


class Trivial(FastHttpUser):
    wait_time = constant(0)

    @task
    def live(self) -> None:
        self.client.get("/health/live", name="trivial view")
