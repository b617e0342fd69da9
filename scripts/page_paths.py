"""The shop's paths the profiling scripts time (``scripts/profile_hits.py``,
``scripts/profile_pages.py``): home, the product page of the demo's product with the most
active offers, a catalog search and the category list. ``scripts/bench_pages.sh`` picks its
product with the same query (inline, in ``manage.py shell``).

Import it after ``django.setup()``. Not a test.
"""

from django.db.models import Count, Q

from storefront.models import Product

DEFAULT_SEARCH = "speaker"


def busiest_product_slug() -> str:
    """The slug of the product with the most active offers (ties: the lowest id): the
    heaviest product page. Inactive offers do not count, whatever the merchant."""
    slug = (
        Product.objects.annotate(n=Count("offers", filter=Q(offers__active=True)))
        .order_by("-n", "id")
        .values_list("slug", flat=True)
        .first()
    )
    if slug is None:
        raise RuntimeError("no products: seed the catalog first (manage.py seed_demo)")
    return slug


def page_paths(*, search: str = DEFAULT_SEARCH) -> dict[str, str]:
    """Name -> path (with its query string) of each page, in the order they are timed."""
    return {
        "home": "/",
        "product": f"/products/{busiest_product_slug()}/",
        "search": f"/api/v1/products/?search={search}",
        "categories": "/api/v1/categories/",
    }
