"""Catalog reads: products with their best offer, offers, categories and merchants."""

import threading
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, cast

from django.db.models import (
    BigIntegerField,
    Case,
    CharField,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import NullIf

from storefront.catalog.shipping_selectors import merchant_terms_for_destination
from storefront.catalog.sql_shapes import Slots, shaped_list
from storefront.catalog.stock_selectors import offer_line_covers_q
from storefront.errors import NotFound, ValidationFailed
from storefront.models import Category, CheapestOfferRefresh, Merchant, MoneyField, Offer, Product
from storefront.search import SEARCH_ORDERING, PreparedSearch, product_search
from storefront.search.free_shipping import ships_free_offer_q
from storefront.search.prices import PRICE_RANGE_KEYS, PriceRange

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

    class BestOffer(TypedDict):
        """What ``_with_best_offer`` annotates (None: nobody sells the product now)."""

        best_price: int | None
        best_offer_id: int | None
        best_merchant_id: int | None
        best_merchant_name: str | None
        offer_count: int

    ProductWithBestOffer = WithAnnotations[Product, BestOffer]

# Products nobody sells go last in both price orders.
PRODUCT_ORDERINGS = {
    "relevance": SEARCH_ORDERING,
    "name": ("name", "id"),
    "price": (F("best_price").asc(nulls_last=True), "name", "id"),
    "-price": (F("best_price").desc(nulls_last=True), "name", "id"),
    "newest": ("-created_at", "-id"),
}


# --- catalog ------------------------------------------------------------------------------


def offer_buyable_q(prefix: str = "") -> Q:
    """Offers a shopper can buy now: active, from an active merchant, not sold out."""
    return Q(**{f"{prefix}active": True, f"{prefix}merchant__active": True}) & (
        Q(**{f"{prefix}stock__isnull": True}) | Q(**{f"{prefix}stock__gt": 0})
    )


def _stored_cheapest_is_fresh() -> Q:
    """Products whose stored cheapest offer (``ProductCheapest``) can be trusted: computed,
    and no change of their offers or merchants since (no pending ``CheapestOfferRefresh``)."""
    pending = CheapestOfferRefresh.objects.filter(product_id=OuterRef("pk"))
    return Q(~Exists(pending), stored_cheapest__isnull=False)


@cache
def _best_offer_expressions() -> dict[str, Any]:
    """The annotations of ``_with_best_offer``, built once per process: they do not depend
    on the request, and building them (five CASEs of subqueries) cost about as much Python as
    compiling the query. ``annotate`` copies what it resolves, so sharing them is safe."""
    buyable = Offer.objects.filter(offer_buyable_q(), product=OuterRef("pk"))
    cheapest = buyable.order_by("unit_price", "merchant_id", "id")
    count = buyable.order_by().values("product").annotate(n=Count("id")).values("n")
    fresh = _stored_cheapest_is_fresh()

    def stored_or_live(stored, live, output_field):
        return Case(When(fresh, then=stored), default=live, output_field=output_field)

    return {
        "best_price": stored_or_live(
            F("stored_cheapest__price"), Subquery(cheapest.values("unit_price")[:1]), MoneyField()
        ),
        "best_offer_id": stored_or_live(
            F("stored_cheapest__offer_id"), Subquery(cheapest.values("id")[:1]), BigIntegerField()
        ),
        "best_merchant_id": stored_or_live(
            F("stored_cheapest__offer__merchant_id"),
            Subquery(cheapest.values("merchant_id")[:1]),
            BigIntegerField(),
        ),
        "best_merchant_name": stored_or_live(
            F("stored_cheapest__offer__merchant__name"),
            Subquery(cheapest.values("merchant__name")[:1]),
            CharField(),
        ),
        # The live count is NULL, not 0, for a product nobody sells; keep it that way.
        "offer_count": stored_or_live(
            NullIf(F("stored_cheapest__offer_count"), Value(0)), Subquery(count[:1]), IntegerField()
        ),
    }


def _with_best_offer(products: QuerySet[Product]) -> "QuerySet[ProductWithBestOffer]":
    """Annotates the cheapest buyable offer (ties: lowest merchant id) and the offer count.

    Products whose stored cheapest offer is fresh (see ``storefront.catalog.cheapest``) read it,
    which keeps price ordering over a large catalog cheap; the others fall back to correlated
    subqueries, which with the (product, active, unit_price) index stay cheap on a paginated
    page. Either way it is one query, with the same values.
    """
    return cast("QuerySet[ProductWithBestOffer]", products.annotate(**_best_offer_expressions()))


# Resolving the best offer's annotations onto a queryset (five CASEs of subqueries, each
# cloned and resolved) cost as much Python as compiling the query. Done once per thread: the
# filters of a request then go onto a clone (every QuerySet method clones, and these two are
# never evaluated themselves). A filter after the annotations selects the same rows. Not once
# per process: clones share the resolved subqueries, and compiling a subquery changes its
# alias reference counts while it runs, so two threads compiling at once dropped a join
# ("missing FROM-clause entry for table u1" under gunicorn's threads).
_resolved = threading.local()


def _per_thread(name: str, build: Callable[[], QuerySet]) -> Any:
    products = getattr(_resolved, name, None)
    if products is None:
        products = build()
        setattr(_resolved, name, products)
    return products


def _products_with_best_offer() -> "QuerySet[ProductWithBestOffer]":
    return _per_thread(
        "best_offer", lambda: _with_best_offer(Product.objects.select_related("category"))
    )


def _products_with_best_price() -> QuerySet[Product]:
    return _per_thread(
        "best_price",
        lambda: Product.objects.annotate(best_price=_best_offer_expressions()["best_price"]),
    )


def product_with_best_price_list() -> QuerySet[Product]:
    """Every product with ``best_price`` only (as ``product_list`` computes it), to narrow
    with ``product_match_list``: for counts and filters that need the price but not the
    rest of the best offer."""
    return _products_with_best_price().all()


def product_ships_free_q(*, postal_code: str) -> Q:
    """Products with a buyable offer that ships free on its own to ``postal_code``."""
    merchant_ids = Merchant.objects.filter(active=True).values_list("pk", flat=True)
    terms = merchant_terms_for_destination(merchant_ids=merchant_ids, postal_code=postal_code)
    offers = ships_free_offer_q(
        {merchant_id: (term.shipping, term.discount) for merchant_id, term in terms.items()}
    )
    return Q(Exists(Offer.objects.filter(offer_buyable_q(), offers, product=OuterRef("pk"))))


def product_list(
    *,
    query: "str | PreparedSearch" = "",
    category: str | int | None = None,
    merchant_id: int | None = None,
    available_only: bool = False,
    price_range: str = "",
    ships_free_to: str = "",
    ordering: str = "relevance",
    ships_free_q: Q | None = None,
) -> QuerySet[Product]:
    """Products matching a search (see ``storefront.search``; a ``PreparedSearch`` reuses
    its preparation), optionally in a category (slug
    or id), sold by a merchant, buyable now, in a price range (a key of ``PRICE_RANGE_KEYS``)
    or shipping free on their own to a postal code, each annotated with ``best_price``,
    ``best_offer_id``, ``best_merchant_id``, ``best_merchant_name`` (None when nothing is
    buyable) and ``offer_count``. ``ordering``: ``relevance`` (name without a query),
    ``name``, ``price``, ``-price`` or ``newest``. A search costs one query up front (are
    there matches as typed?; on PostgreSQL one more for exact hits and categories),
    ``ships_free_to`` two (the merchants' terms there; pass ``ships_free_q``, from
    ``product_ships_free_q``, to reuse them); the list is one query."""
    if ordering not in PRODUCT_ORDERINGS:
        raise ValidationFailed(
            f"Unknown ordering {ordering!r}; use one of {', '.join(PRODUCT_ORDERINGS)}.",
            field="ordering",
        )
    chosen_range = price_range_get(key=price_range)
    if isinstance(query, str):
        query = query.strip()
    if not query and ordering == "relevance":
        ordering = "name"
    products = product_match_list(
        products=_products_with_best_offer(),
        query=query,
        category=category,
        merchant_id=merchant_id,
        ships_free_to=ships_free_to,
        ships_free_q=ships_free_q,
    )
    annotated = cast("QuerySet[ProductWithBestOffer]", products)
    if available_only:
        annotated = annotated.filter(best_price__isnull=False)
    if chosen_range is not None:
        annotated = annotated.filter(chosen_range.q("best_price"))
    return annotated.order_by(*PRODUCT_ORDERINGS[ordering])


def price_range_get(*, key: str) -> PriceRange | None:
    """The price range of a key of ``PRICE_RANGE_KEYS`` (None for ""); ``ValidationFailed``
    for any other key."""
    if not key:
        return None
    try:
        return PRICE_RANGE_KEYS[key]
    except KeyError:
        raise ValidationFailed(
            f"Unknown price range {key!r}; use one of {', '.join(PRICE_RANGE_KEYS)}.",
            field="price_range",
        ) from None


def _category_q(category: str | int) -> Q:
    """``product_list``'s category filter: an id (an int or digits) or a slug."""
    if isinstance(category, int) or str(category).isdigit():
        return Q(category_id=int(category))
    return Q(category__slug=category)


def product_match_list(
    *,
    products: QuerySet[Product] | None = None,
    query: "str | PreparedSearch" = "",
    category: str | int | None = None,
    merchant_id: int | None = None,
    ships_free_to: str = "",
    ships_free_q: Q | None = None,
) -> QuerySet[Product]:
    """The filters of ``product_list`` that do not read the best offer, without its
    annotations or order (a search annotates ``search_rank``): what counts and ``IN``
    subqueries need, without the best offer's joins."""
    products = Product.objects.all() if products is None else products
    if isinstance(query, str):
        query = query.strip()
    if query:
        products = product_search(products, query=query)
    if category not in (None, ""):
        products = products.filter(_category_q(category))
    if merchant_id is not None:
        sold_by = Offer.objects.filter(product=OuterRef("pk"), merchant_id=merchant_id, active=True)
        products = products.filter(Exists(sold_by))
    if ships_free_to:
        if ships_free_q is None:
            ships_free_q = product_ships_free_q(postal_code=ships_free_to)
        products = products.filter(ships_free_q)
    return products


def product_get(
    *, product_id: int | None = None, slug: str | None = None
) -> "ProductWithBestOffer":
    """One product with its category and the best-offer values ``product_list`` annotates;
    ``NotFound`` otherwise. Two plain queries, each compiled once per process
    (``storefront.catalog.sql_shapes``): for one product its buyable offers are read directly (their
    cheapest, ties to the lowest merchant id then offer id, and their count), which costs a
    fraction of the list's stored-or-live annotations."""
    if (product_id is None) == (slug is None):
        raise ValueError("Pass exactly one of product_id and slug.")
    try:
        found = _product_read(product_id=product_id, slug=slug)
    except (ValueError, TypeError, OverflowError):  # not an id any row can have
        found = []
    if not found:
        raise NotFound("No such product.", code="product_not_found", field="product")
    product = found[0]
    slots = Slots()
    slots.number(product.pk)
    buyable = shaped_list(
        key="product_buyable_offers",
        slots=slots,
        build=lambda sentinels: _buyable_offers(sentinels.number(product.pk)),
        plain=lambda: _buyable_offers(product.pk),
    )
    best = buyable[0] if buyable else (None, None, None, None)
    annotated = cast("ProductWithBestOffer", product)
    annotated.best_price, annotated.best_offer_id = best[0], best[1]
    annotated.best_merchant_id, annotated.best_merchant_name = best[2], best[3]
    # As the list's: None, not 0, for a product nobody sells.
    annotated.offer_count = len(buyable) or None  # type: ignore[assignment]
    return annotated


def _product_read(*, product_id: int | None, slug: str | None) -> list[Product]:
    """The product of this id or slug (unique), from SQL compiled once."""
    if product_id is not None:
        return _products_shaped("pk", int(product_id), Slots.number)
    return _products_shaped("slug", str(slug), Slots.text)


_Lookup = TypeVar("_Lookup", int, str)


def _products_shaped(
    field: str, value: _Lookup, take: Callable[[Slots, _Lookup], _Lookup]
) -> list[Product]:
    slots = Slots()
    take(slots, value)
    return shaped_list(
        key=("product_get", field),
        slots=slots,
        build=lambda sentinels: _products_where(**{field: take(sentinels, value)}),
        plain=lambda: _products_where(**{field: value}),
    )


def _products_where(**lookup: object) -> QuerySet[Product]:
    return Product.objects.select_related("category").filter(**lookup)


def _buyable_offers(product_id: int) -> QuerySet:
    return (
        Offer.objects.filter(offer_buyable_q(), product_id=product_id)
        .order_by("unit_price", "merchant_id", "id")
        .values_list("unit_price", "id", "merchant_id", "merchant__name")
    )


def product_offer_list(
    *, product: Product | int, include_inactive: bool = False
) -> QuerySet[Offer]:
    """A product's offers with their merchants, lowest item price first (ties: lowest
    merchant id).

    By default only active offers of active merchants; sold-out offers stay in the list
    (``stock == 0``) so shoppers see them.
    """
    product_id = product.pk if isinstance(product, Product) else product
    offers = Offer.objects.filter(product_id=product_id).select_related("merchant")
    if not include_inactive:
        offers = offers.filter(active=True, merchant__active=True)
    return offers.order_by("unit_price", "merchant_id", "id")


def product_offers_read(*, product: Product | int) -> list[Offer]:
    """``product_offer_list(product=...)``'s offers, read from SQL compiled once (the product
    page's rows)."""
    product_id = product.pk if isinstance(product, Product) else int(product)
    slots = Slots()
    slots.number(product_id)
    return shaped_list(
        key="product_offers",
        slots=slots,
        build=lambda sentinels: product_offer_list(product=sentinels.number(product_id)),
        plain=lambda: product_offer_list(product=product_id),
    )


def product_cheapest_offer(
    *, product: Product | int, quantity: int, postal_code: str | None = None
) -> Offer | None:
    """The offer of ``product`` with the lowest item price a shopper can buy now in
    ``quantity`` (active, of an active merchant, with that much stock for one line: at one
    warehouse for a merchant with warehouses, one with a rate for ``postal_code`` when given;
    see ``offer_line_covers_q``), ties to the lowest merchant id; ``None`` when nobody has
    that many. One query. Shipping left out: what "Add cheapest" adds is the cheapest
    delivered (``storefront.carts.delivered``)."""
    covers = offer_line_covers_q(quantity=quantity, postal_code=postal_code)
    return product_offer_list(product=product).filter(covers).first()


def offer_get(*, offer_id: int, buyable_only: bool = False) -> Offer:
    """One offer with its product and merchant; ``NotFound`` otherwise."""
    offers = Offer.objects.select_related("product", "merchant")
    if buyable_only:
        offers = offers.filter(active=True, merchant__active=True)
    try:
        return offers.get(pk=offer_id)
    except (Offer.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such offer.", code="offer_not_found", field="offer") from None


def category_list() -> QuerySet[Category]:
    """Categories by name, each with ``product_count``."""
    return Category.objects.annotate(product_count=Count("products")).order_by("name")


def category_list_read() -> list[Category]:
    """``category_list()``'s categories, read from SQL compiled once."""
    return shaped_list(
        key="category_list", slots=Slots(), build=lambda _: category_list(), plain=category_list
    )


def merchant_list(*, active_only: bool = True) -> QuerySet[Merchant]:
    """Merchants by name, each with ``offer_count`` (active offers) and ``zone_count``."""
    merchants = Merchant.objects.all()
    if active_only:
        merchants = merchants.filter(active=True)
    return merchants.annotate(
        offer_count=Count("offers", filter=Q(offers__active=True), distinct=True),
        zone_count=Count("zones", distinct=True),
    ).order_by("name", "id")


def merchant_get(*, merchant_id: int | None = None, slug: str | None = None) -> Merchant:
    if (merchant_id is None) == (slug is None):
        raise ValueError("Pass exactly one of merchant_id and slug.")
    lookup = {"pk": merchant_id} if merchant_id is not None else {"slug": slug}
    try:
        return Merchant.objects.get(**lookup)
    except (Merchant.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such merchant.", code="merchant_not_found", field="merchant") from None
