"""Reads of the marketplace: catalog, offers, shipping rules and carts.

Every selector runs a bounded number of queries whatever the size of its result (no N+1);
the tests pin the counts.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import (
    BigIntegerField,
    Case,
    CharField,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import NullIf

from storefront.errors import NotFound, ValidationFailed
from storefront.models import (
    Cart,
    CartLine,
    Category,
    CheapestOfferRefresh,
    Merchant,
    MoneyField,
    Offer,
    Product,
    ShippingZone,
)
from storefront.models.catalog import stock_covers
from storefront.pricing import MerchantCost, PricedLine, Shipment, shipments_price
from storefront.shipping import (
    Discount,
    ShippingRule,
    postal_prefix_candidates,
    shipping_rule_resolve,
)
from storefront.validators import gtin_normalize

# Products nobody sells go last in both price orders.
PRODUCT_ORDERINGS = {
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
    return Q(stored_cheapest__isnull=False) & ~Exists(pending)


def _with_best_offer(products: QuerySet[Product]) -> QuerySet[Product]:
    """Annotates the cheapest buyable offer (ties: lowest merchant id) and the offer count.

    Products whose stored cheapest offer is fresh (see ``storefront.cheapest``) read it, which
    keeps price ordering over a large catalog cheap; the others fall back to correlated
    subqueries, which with the (product, active, unit_price) index stay cheap on a paginated
    page. Either way it is one query, with the same values.
    """
    buyable = Offer.objects.filter(offer_buyable_q(), product=OuterRef("pk"))
    cheapest = buyable.order_by("unit_price", "merchant_id", "id")
    count = buyable.order_by().values("product").annotate(n=Count("id")).values("n")
    fresh = _stored_cheapest_is_fresh()

    def stored_or_live(stored, live, output_field):
        return Case(When(fresh, then=stored), default=live, output_field=output_field)

    return products.annotate(
        best_price=stored_or_live(
            F("stored_cheapest__price"), Subquery(cheapest.values("unit_price")[:1]), MoneyField()
        ),
        best_offer_id=stored_or_live(
            F("stored_cheapest__offer_id"), Subquery(cheapest.values("id")[:1]), BigIntegerField()
        ),
        best_merchant_id=stored_or_live(
            F("stored_cheapest__offer__merchant_id"),
            Subquery(cheapest.values("merchant_id")[:1]),
            BigIntegerField(),
        ),
        best_merchant_name=stored_or_live(
            F("stored_cheapest__offer__merchant__name"),
            Subquery(cheapest.values("merchant__name")[:1]),
            CharField(),
        ),
        # The live count is NULL, not 0, for a product nobody sells; keep it that way.
        offer_count=stored_or_live(
            NullIf(F("stored_cheapest__offer_count"), Value(0)), Subquery(count[:1]), IntegerField()
        ),
    )


def _search_q(query: str) -> Q:
    """Every word must appear in the name; a word of digits may also be the start of a GTIN."""
    condition = Q()
    for term in query.split():
        term_q = Q(name__icontains=term)
        digits = gtin_normalize(term)
        if digits.isdigit():
            term_q |= Q(gtin__startswith=digits)
        condition &= term_q
    return condition


def product_list(
    *,
    query: str = "",
    category: str | int | None = None,
    merchant_id: int | None = None,
    available_only: bool = False,
    ordering: str = "name",
) -> QuerySet[Product]:
    """Products matching a search (name words or GTIN), optionally in a category (slug or id)
    or sold by a merchant, each annotated with ``best_price``, ``best_offer_id``,
    ``best_merchant_id``, ``best_merchant_name`` (None when nothing is buyable) and
    ``offer_count``. ``ordering``: ``name``, ``price``, ``-price`` or ``newest``."""
    if ordering not in PRODUCT_ORDERINGS:
        raise ValidationFailed(
            f"Unknown ordering {ordering!r}; use one of {', '.join(PRODUCT_ORDERINGS)}.",
            field="ordering",
        )
    products = Product.objects.select_related("category")
    query = (query or "").strip()
    if query:
        products = products.filter(_search_q(query))
    if category not in (None, ""):
        if isinstance(category, int) or str(category).isdigit():
            products = products.filter(category_id=int(category))
        else:
            products = products.filter(category__slug=category)
    if merchant_id is not None:
        sold_by = Offer.objects.filter(product=OuterRef("pk"), merchant_id=merchant_id, active=True)
        products = products.filter(Exists(sold_by))
    products = _with_best_offer(products)
    if available_only:
        products = products.filter(best_price__isnull=False)
    return products.order_by(*PRODUCT_ORDERINGS[ordering])


def product_get(*, product_id: int | None = None, slug: str | None = None) -> Product:
    """One product with its category and best-offer annotations; ``NotFound`` otherwise."""
    if (product_id is None) == (slug is None):
        raise ValueError("Pass exactly one of product_id and slug.")
    lookup = {"pk": product_id} if product_id is not None else {"slug": slug}
    try:
        return _with_best_offer(Product.objects.select_related("category")).get(**lookup)
    except (Product.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such product.", code="product_not_found", field="product") from None


def product_offer_list(
    *, product: Product | int, include_inactive: bool = False
) -> QuerySet[Offer]:
    """A product's offers with their merchants, cheapest first (ties: lowest merchant id).

    By default only active offers of active merchants; sold-out offers stay in the list
    (``stock == 0``) so shoppers see them.
    """
    product_id = product.pk if isinstance(product, Product) else product
    offers = Offer.objects.filter(product_id=product_id).select_related("merchant")
    if not include_inactive:
        offers = offers.filter(active=True, merchant__active=True)
    return offers.order_by("unit_price", "merchant_id", "id")


def product_cheapest_offer(*, product: Product | int, quantity: int) -> Offer | None:
    """The cheapest offer of ``product`` a shopper can buy now in ``quantity`` (active, of an
    active merchant, with that much stock), ties to the lowest merchant id as the product page
    lists them; ``None`` when nobody has that many. One query."""
    has_stock = Q(stock__isnull=True) | Q(stock__gte=quantity)
    return product_offer_list(product=product).filter(has_stock).first()


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


# --- shipping -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MerchantTerms:
    """What the pricing contract needs of one merchant for one destination."""

    merchant_id: int
    name: str
    active: bool
    shipping: ShippingRule
    discount: Discount | None


def merchant_terms_for_destination(
    *, merchant_ids: Iterable[int], postal_code: str | None
) -> dict[int, MerchantTerms]:
    """Shipping rule (longest matching zone, else defaults) and discount of many merchants.

    Two queries whatever the number of merchants: the merchants, then only the zones whose
    prefix matches the destination (an ``IN`` over its at most 11 prefixes; not read when none
    of the ids exists). Unknown ids are left out of the result.
    """
    ids = set(merchant_ids)
    if not ids:
        return {}
    merchants = Merchant.objects.filter(pk__in=ids).only(
        "id",
        "name",
        "active",
        "base_fee",
        "per_extra_unit",
        "free_over",
        "discount_min_units",
        "discount_basis_points",
    )
    by_id = {merchant.pk: merchant for merchant in merchants}
    rules = _shipping_rules_via_sql(
        pairs=[(merchant_id, postal_code) for merchant_id in by_id], merchants=by_id
    )
    return {
        merchant_id: _merchant_terms(merchant, rules[(merchant_id, postal_code)])
        for merchant_id, merchant in by_id.items()
    }


def shipping_rules_for_destination(
    *, merchant_ids: Iterable[int], postal_code: str | None
) -> dict[int, ShippingRule]:
    """``{merchant_id: ShippingRule}`` for one destination, in two queries (see above)."""
    terms = merchant_terms_for_destination(merchant_ids=merchant_ids, postal_code=postal_code)
    return {merchant_id: term.shipping for merchant_id, term in terms.items()}


def shipping_rule_for_destination(*, merchant: Merchant, postal_code: str | None) -> ShippingRule:
    """One merchant's rule for a destination (one query, for the zones)."""
    pair = (merchant.pk, postal_code)
    return _shipping_rules_via_sql(pairs=[pair], merchants={merchant.pk: merchant})[pair]


def shipping_rules_for_destinations(
    *, pairs: Sequence[tuple[int, str | None]]
) -> list[ShippingRule | None]:
    """The rule of each (merchant id, postal code), in order, e.g. every merchant of every
    open cart when pricing many carts: the same rules as ``shipping_rules_for_destination``
    (longest matching zone, ``""`` matches everywhere, else the merchant's defaults; inactive
    merchants resolved too), ``None`` where it would leave the merchant out (unknown id).

    One batched longest-prefix match over the per-process zone index
    (``storefront.zone_index``); no query while the index is fresh, two when it is rebuilt.
    """
    from storefront.cache import CacheUnavailable
    from storefront.zone_index import zone_index_current

    try:
        return zone_index_current().resolve(pairs=pairs)
    except CacheUnavailable:
        # The index's freshness stamp lives in the shared cache: without it an index may be
        # stale, so every pair is left to the exact SQL resolution (a query, never a 500).
        return [None] * len(pairs)


MerchantDestination = tuple[int, str | None]


def _shipping_rules_for_pairs(
    *, pairs: Iterable[MerchantDestination], merchants: Mapping[int, Merchant]
) -> dict[MerchantDestination, ShippingRule]:
    """The rule of each distinct (merchant id, postal code) in one batched index match.

    A merchant the index does not know (created in this still open transaction, or written
    without signals and without ``zone_index_invalidate``) is resolved in SQL from its row in
    ``merchants`` and its zones: one query more, the same rule.
    """
    pairs = list(dict.fromkeys(pairs))
    if not pairs:
        return {}
    rules = dict(zip(pairs, shipping_rules_for_destinations(pairs=pairs), strict=True))
    unknown = [pair for pair, rule in rules.items() if rule is None]
    if unknown:
        rules.update(_shipping_rules_via_sql(pairs=unknown, merchants=merchants))
    return rules


def _shipping_rules_via_sql(
    *, pairs: Sequence[MerchantDestination], merchants: Mapping[int, Merchant]
) -> dict[MerchantDestination, ShippingRule]:
    """The rule of each (merchant id, postal code) from ``merchants``' rows and the zones that
    can match any of the codes, read in one query (none for no pairs)."""
    if not pairs:
        return {}
    candidates = {prefix for _, code in pairs for prefix in postal_prefix_candidates(code)}
    zones: dict[int, list[ShippingRule]] = defaultdict(list)
    for zone in ShippingZone.objects.filter(
        merchant_id__in={merchant_id for merchant_id, _ in pairs}, postal_prefix__in=candidates
    ).only("merchant_id", "postal_prefix", "base_fee", "per_extra_unit", "free_over"):
        zones[zone.merchant_id].append(zone.shipping_rule())
    return {
        (merchant_id, code): shipping_rule_resolve(
            default=merchants[merchant_id].default_shipping_rule(),
            zones=zones.get(merchant_id, ()),
            postal_code=code,
        )
        for merchant_id, code in pairs
    }


def _merchant_terms(merchant: Merchant, shipping: ShippingRule) -> MerchantTerms:
    return MerchantTerms(
        merchant_id=merchant.pk,
        name=merchant.name,
        active=merchant.active,
        shipping=shipping,
        discount=merchant.discount,
    )


def merchant_terms_for_merchants(
    *, merchants: Iterable[Merchant], postal_code: str | None
) -> dict[int, MerchantTerms]:
    """``merchant_terms_for_destination`` for merchants already read (e.g. with a product's
    offers): the same terms, with the shipping rules from the zone index in one batched match,
    so no query while the index is fresh (that selector reads merchants and zones: two)."""
    by_id = {merchant.pk: merchant for merchant in merchants}
    rules = _shipping_rules_for_pairs(
        pairs=[(merchant_id, postal_code) for merchant_id in by_id], merchants=by_id
    )
    return {
        merchant_id: _merchant_terms(merchant, rules[(merchant_id, postal_code)])
        for merchant_id, merchant in by_id.items()
    }


# --- carts --------------------------------------------------------------------------------


def cart_line_list(*, cart: Cart) -> QuerySet[CartLine]:
    """A cart's lines in the order they were added, with offer, merchant, product, category."""
    return (
        CartLine.objects.filter(cart_id=cart.pk)
        .select_related("offer__merchant", "product__category")
        .order_by("created_at", "id")
    )


def cart_get(
    *, cart_id: int, owner=None, session_key: str | None = None, with_lines: bool = True
) -> Cart:
    """A cart by id, only if it belongs to ``owner`` (a user) or ``session_key``.

    Someone else's cart is ``NotFound``, never "forbidden": its existence is not revealed.
    ``with_lines`` prefetches the lines as ``cart_line_list`` selects them (two queries).
    """
    carts = Cart.objects.all()
    if owner is not None and getattr(owner, "is_authenticated", False):
        carts = carts.filter(owner=owner)
    elif session_key:
        carts = carts.filter(owner__isnull=True, session_key=session_key)
    else:
        raise NotFound("No such cart.", code="cart_not_found", field="cart")
    if with_lines:
        lines = CartLine.objects.select_related("offer__merchant", "product__category").order_by(
            "created_at", "id"
        )
        carts = carts.prefetch_related(Prefetch("lines", queryset=lines))
    try:
        return carts.get(pk=cart_id)
    except (Cart.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such cart.", code="cart_not_found", field="cart") from None


def cart_find(*, user=None, session_key: str | None = None) -> Cart | None:
    """The cart of a signed-in user, else of an anonymous session, else ``None`` (no writes)."""
    if user is not None and getattr(user, "is_authenticated", False):
        return Cart.objects.filter(owner=user).first()
    if session_key:
        return Cart.objects.filter(owner__isnull=True, session_key=session_key).first()
    return None


@dataclass(frozen=True)
class LinePricing:
    line_id: int
    product_id: int
    offer_id: int
    merchant_id: int
    quantity: int
    unit_price: int
    unit_price_snapshot: int
    line_total: int
    # None when buyable; else "offer_inactive", "merchant_inactive" or "insufficient_stock".
    problem: str | None
    line: CartLine = field(repr=False, compare=False)

    @property
    def available(self) -> bool:
        return self.problem is None

    @property
    def price_changed(self) -> bool:
        return self.unit_price != self.unit_price_snapshot

    @property
    def price_change(self) -> int:
        """Current minus snapshot unit price, in cents (negative: it got cheaper)."""
        return self.unit_price - self.unit_price_snapshot


@dataclass(frozen=True)
class MerchantGroup:
    merchant_id: int
    merchant_name: str
    lines: tuple[LinePricing, ...]
    shipping_rule: ShippingRule
    discount_rule: Discount | None
    cost: MerchantCost

    # Flattened for templates and serializers.
    @property
    def subtotal(self) -> int:
        return self.cost.subtotal

    @property
    def units(self) -> int:
        return self.cost.units

    @property
    def discount(self) -> int:
        return self.cost.discount

    @property
    def shipping(self) -> int:
        return self.cost.shipping

    @property
    def total(self) -> int:
        return self.cost.cost

    @property
    def missing_for_free_shipping(self) -> int | None:
        return self.cost.missing_for_free_shipping


@dataclass(frozen=True)
class CartPricingSummary:
    """The cart as it stands, priced by the contract: one group per merchant that ships
    something, in order of each merchant's first line. Lines that cannot be bought now
    (``unavailable``) are listed apart and are not in any total."""

    cart_id: int
    version: int
    postal_code: str
    currency: str
    groups: tuple[MerchantGroup, ...]
    unavailable: tuple[LinePricing, ...]

    @property
    def subtotal(self) -> int:
        return sum(group.subtotal for group in self.groups)

    @property
    def discount(self) -> int:
        return sum(group.discount for group in self.groups)

    @property
    def shipping(self) -> int:
        return sum(group.shipping for group in self.groups)

    @property
    def total(self) -> int:
        return sum(group.total for group in self.groups)

    @property
    def units(self) -> int:
        return sum(group.units for group in self.groups)

    @property
    def line_count(self) -> int:
        return sum(len(group.lines) for group in self.groups) + len(self.unavailable)

    @property
    def is_empty(self) -> bool:
        return self.line_count == 0

    @property
    def price_changes(self) -> tuple[LinePricing, ...]:
        lines = [line for group in self.groups for line in group.lines]
        return tuple(line for line in [*lines, *self.unavailable] if line.price_changed)


def line_unavailable_reason(
    *, offer_active: bool, merchant_active: bool, stock: int | None, quantity: int
) -> str | None:
    """Why a cart line cannot be bought as it stands (``"offer_inactive"``,
    ``"merchant_inactive"``, ``"insufficient_stock"``), or None: the one rule the cart page
    and Improve cart both apply (``stock`` None is unlimited)."""
    if not offer_active:
        return "offer_inactive"
    if not merchant_active:
        return "merchant_inactive"
    if not stock_covers(stock, quantity):
        return "insufficient_stock"
    return None


def _line_problem(line: CartLine) -> str | None:
    return line_unavailable_reason(
        offer_active=line.offer.active,
        merchant_active=line.offer.merchant.active,
        stock=line.offer.stock,
        quantity=line.quantity,
    )


def _line_pricing(line: CartLine) -> LinePricing:
    return LinePricing(
        line_id=line.pk,
        product_id=line.product_id,
        offer_id=line.offer_id,
        merchant_id=line.offer.merchant_id,
        quantity=line.quantity,
        unit_price=line.offer.unit_price,
        unit_price_snapshot=line.unit_price_snapshot,
        line_total=line.quantity * line.offer.unit_price,
        problem=_line_problem(line),
        line=line,
    )


def _cart_lines_priced(*, cart_ids: Iterable[int]) -> dict[int, list[LinePricing]]:
    """The lines of every cart, priced as they stand, in one query (each cart's lines in the
    order ``cart_line_list`` gives)."""
    lines = (
        CartLine.objects.filter(cart_id__in=set(cart_ids))
        .select_related("offer__merchant", "product__category")
        .order_by("cart_id", "created_at", "id")
    )
    priced: dict[int, list[LinePricing]] = defaultdict(list)
    for line in lines:
        priced[line.cart_id].append(_line_pricing(line))
    return priced


def _cart_summary_build(
    *, cart: Cart, priced: Sequence[LinePricing], terms: Mapping[int, MerchantTerms]
) -> CartPricingSummary:
    """Groups the buyable lines by merchant (``terms`` holds each one's terms for the cart's
    destination) and prices them through the engine's pricing routine."""
    by_merchant: dict[int, list[LinePricing]] = {}
    for line in priced:
        if line.available:
            by_merchant.setdefault(line.merchant_id, []).append(line)
    shipments = [
        Shipment(
            merchant_id=merchant_id,
            shipping=terms[merchant_id].shipping,
            discount=terms[merchant_id].discount,
            lines=tuple(
                PricedLine(line_id=line.line_id, quantity=line.quantity, unit_price=line.unit_price)
                for line in lines
            ),
        )
        for merchant_id, lines in by_merchant.items()
    ]
    costs = shipments_price(shipments)
    groups = tuple(
        MerchantGroup(
            merchant_id=merchant_id,
            merchant_name=terms[merchant_id].name,
            lines=tuple(lines),
            shipping_rule=terms[merchant_id].shipping,
            discount_rule=terms[merchant_id].discount,
            cost=costs[merchant_id],
        )
        for merchant_id, lines in by_merchant.items()
    )
    return CartPricingSummary(
        cart_id=cart.pk,
        version=cart.version,
        postal_code=cart.postal_code,
        currency=settings.SHOP_CURRENCY,
        groups=groups,
        unavailable=tuple(line for line in priced if not line.available),
    )


def cart_pricing_summaries(*, carts: Iterable[Cart]) -> list[CartPricingSummary]:
    """``cart_pricing_summary`` of each cart, in order, for a whole page or batch of carts.

    One query for the lines of every cart (with their offers and merchants), then the shipping
    rule of every (merchant, cart destination) in one batched match of the zone index: no
    query while it is fresh, two when a zone or merchant changed since this process built it,
    one more when a line's merchant is newer than the index. Never one query per cart.
    """
    carts = list(carts)
    priced = _cart_lines_priced(cart_ids=[cart.pk for cart in carts])
    merchants: dict[int, Merchant] = {}
    pairs: list[MerchantDestination] = []
    for cart in carts:
        for line in priced.get(cart.pk, ()):
            if line.available:
                merchants.setdefault(line.merchant_id, line.line.offer.merchant)
                pairs.append((line.merchant_id, cart.postal_code))
    rules = _shipping_rules_for_pairs(pairs=pairs, merchants=merchants)
    terms = {
        (merchant_id, code): _merchant_terms(merchants[merchant_id], rule)
        for (merchant_id, code), rule in rules.items()
    }
    summaries = []
    for cart in carts:
        lines = priced.get(cart.pk, [])
        cart_terms = {
            line.merchant_id: terms[(line.merchant_id, cart.postal_code)]
            for line in lines
            if line.available
        }
        summaries.append(_cart_summary_build(cart=cart, priced=lines, terms=cart_terms))
    return summaries


def cart_pricing_summary(*, cart: Cart) -> CartPricingSummary:
    """Prices the cart's current lines at their offers' current prices, grouped by merchant,
    with each merchant's shipping resolved for the cart's destination, through the engine's
    pricing routine (``storefront.pricing``). The batch path for one cart (see
    ``cart_pricing_summaries``): one query while the zone index is fresh; no writes."""
    (summary,) = cart_pricing_summaries(carts=[cart])
    return summary


def cart_pricing_summary_via_sql(*, cart: Cart) -> CartPricingSummary:
    """``cart_pricing_summary`` with each merchant's terms read and its zone resolved in SQL
    (``merchant_terms_for_destination``), three queries per cart: the path the zone index
    replaced, kept as the reference its parity tests and ``bench_cart_pricing`` measure."""
    priced = [_line_pricing(line) for line in cart_line_list(cart=cart)]
    terms = merchant_terms_for_destination(
        merchant_ids={line.merchant_id for line in priced if line.available},
        postal_code=cart.postal_code,
    )
    return _cart_summary_build(cart=cart, priced=priced, terms=terms)
