"""Catalog and product pages."""

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from storefront.caching.fragments import (
    FragmentSpec,
    cached_value,
    product_cached_get,
    render_shared_page,
)
from storefront.caching.versions import CATALOG, SHARED, product_version_name
from storefront.carts.delivered import (
    CartBasis,
    DeliveredCost,
    delivered_cheapest,
    delivered_nodes_read,
    offers_delivered_cost,
)
from storefront.carts.fulfillment import CartNodes
from storefront.carts.pricing_summary import cart_pricing_summary_for_product
from storefront.catalog.selectors import category_list_read, product_offers_read
from storefront.catalog.shipping_selectors import MerchantTerms, merchant_terms_for_merchants
from storefront.errors import NotFound
from storefront.models import MAX_LINE_QUANTITY, Offer
from storefront.money import format_money
from storefront.search import search_prepare
from storefront.search.cards import products_cheapest_delivered
from storefront.search.delivered import DeliveredTerms, delivered_terms_read
from storefront.search.facets import CatalogFilters, product_facets
from storefront.search.listing import ProductListPages
from storefront.templatetags.web_tags import (
    discount_terms,
    initials,
    shipping_terms,
    svg_data_uri,
    tile_hue,
)
from storefront.web.carts import request_cart_find
from storefront.web.forms import AddToCartForm, CatalogFilterForm
from storefront.web.pagination import CountedPaginator

if TYPE_CHECKING:
    from storefront.catalog.selectors import ProductWithBestOffer

PRODUCTS_PER_PAGE = 24
MINUS = "\u2212"


def catalog(request: HttpRequest) -> HttpResponse:
    cart = request_cart_find(request)
    postal_code = cart.postal_code if cart else ""
    # The grid varies with the whole query string (its forms send the shopper back to it) and
    # with the postal code (the "ships free to" facet).
    spec = FragmentSpec("catalog", (CATALOG,), (request.get_full_path(), postal_code))
    # A visitor with nothing of their own may get the whole cached page: no context needed.
    return render_shared_page(
        request,
        "web/catalog.html",
        lambda: _catalog_context(request, spec, postal_code=postal_code),
        spec,
    )


def _catalog_context(request: HttpRequest, spec: FragmentSpec, *, postal_code: str) -> dict:
    # Shared by every shopper: the categories and the product grid (see web/fragments.py).
    categories = cached_value(
        FragmentSpec("categories", (CATALOG,)), category_list_read, request=request
    )
    form = CatalogFilterForm(request.GET, categories=categories)
    # A stale link with an unknown category still lists products: invalid fields fall back
    # to their defaults and the form says what was ignored.
    form.is_valid()
    data = form.cleaned_data
    query = data.get("q") or ""
    category = data.get("category") or ""
    filters = CatalogFilters(
        # Prepared once for the list and every facet.
        query=search_prepare(query) if query else "",
        category=category or None,
        merchant_id=data.get("merchant"),
        available_only=bool(data.get("in_stock")),
        price_range=data.get("price") or "",
        ships_free_to=postal_code if data.get("free") else "",
    )

    @cache
    def terms() -> DeliveredTerms:
        # Every active merchant's single-unit terms for the destination: what the list's
        # delivered prices, their order and the price facet read (only on a cache miss).
        return delivered_terms_read(postal_code=postal_code)

    facets = SimpleLazyObject(
        lambda: product_facets(filters=filters, postal_code=postal_code, terms=terms())
    )

    def page():
        # The facets' grouped query counted the list already.
        products = ProductListPages(
            filters=filters,
            ordering=data.get("sort") or "relevance",
            count=facets.listed,
            terms=terms(),
        )
        paginator = CountedPaginator(products, PRODUCTS_PER_PAGE, count=facets.listed)
        return paginator.get_page(request.GET.get("page"))

    page_object = SimpleLazyObject(page)
    return {
        "form": form,
        # Only a cache miss lists the products and counts the facets.
        "page": page_object,
        "cards": SimpleLazyObject(
            lambda: product_cards(page_object.object_list, postal_code=postal_code, terms=terms())
        ),
        "query": query,
        "category": next((c for c in categories if c.slug == category), None),
        "categories": categories,
        "facets": facets,
        "merchant_name": lambda: next((m.label for m in facets.merchants if m.selected), ""),
        "filtered": filters != CatalogFilters(),
        # Card prices are delivered prices; what they assume about delivery is said once.
        "delivered_basis": delivered_basis_text(postal_code),
        "catalog_fragment": spec,
    }


def product_cards(products, *, postal_code: str, terms: DeliveredTerms) -> list[dict]:
    """What the catalog grid shows of each product, formatted once here: the template then
    only reads dictionary keys, the cheapest lookups it has (attributes of model instances
    and filters cost several times more, for some twenty values on each of 24 cards).

    Each card's price is its cheapest offer delivered to ``postal_code``, one unit bought on
    its own: the product page's ranking for an empty cart (one query for the page's offers),
    the figure the list's ``delivered_price`` sorts by."""
    # Slugs are letters, digits, "-" and "_", which a URL keeps as they are.
    product_url = reverse("product", args=["slug"]).removesuffix("slug/")
    cheapest = products_cheapest_delivered(
        product_ids=[product.pk for product in products],
        postal_code=postal_code,
        # The warehouses the list's terms read already (version 2 merchants).
        warehouses={merchant.merchant_id: merchant.nodes for merchant in terms.warehouses},
    )
    cards = []
    for product in products:
        category = product.category
        listed = cheapest.get(product.pk)
        cards.append(
            {
                "pk": product.pk,
                "url": f"{product_url}{product.slug}/",
                "hue": tile_hue(category.slug),
                "image": svg_data_uri(product.image_svg) if product.image_svg else "",
                "initials": "" if product.image_svg else initials(product.name),
                "category_name": category.name,
                "brand": product.brand,
                "name": product.name,
                "gtin": product.gtin,
                "price": None if listed is None else format_money(listed.cost.increment),
                "merchant_name": listed.merchant_name if listed else "",
                "price_note": delivered_note(listed.cost, listed.merchant_name) if listed else "",
                "offer_count": listed.offer_count if listed else None,
            }
        )
    return cards


@dataclass(frozen=True)
class OfferRow:
    offer: Offer
    terms: MerchantTerms | None
    cheapest: bool
    # What adding one unit adds to the shopper's cart, delivered (None: no terms).
    delivered: DeliveredCost | None = None
    # The warehouses of merchants that ship from them, for the shopper's destination.
    nodes: CartNodes | None = None

    @property
    def one_warehouse(self) -> bool:
        """The offer's merchant ships from warehouses: a cart line of it ships from one."""
        return self.nodes is not None and self.nodes.is_v2(self.offer.merchant_id)

    @property
    def stock(self) -> int | None:
        """What one cart line can have (None: unlimited): the offer's stock, or for a merchant
        with warehouses the most one of them that ships to the shopper holds, never the
        offer's stock (their sum)."""
        if self.nodes is None or not self.one_warehouse:
            return self.offer.stock
        return self.nodes.ships_at_most(merchant_id=self.offer.merchant_id, offer_id=self.offer.pk)

    @property
    def sold_out(self) -> bool:
        return self.stock == 0

    @property
    def max_quantity(self) -> int:
        """The most the quantity input allows (the server checks again)."""
        stock = self.stock
        if stock is None:
            return MAX_LINE_QUANTITY
        return max(1, min(stock, MAX_LINE_QUANTITY))

    @property
    def low_stock(self) -> bool:
        stock = self.stock
        return stock is not None and 0 < stock <= 5

    def view(self) -> dict:
        """The row as the offer list shows it, formatted once (see ``product_cards``)."""
        offer, terms = self.offer, self.terms
        shipping = terms.shipping if terms is not None else None
        cost = self.delivered
        return {
            "offer_id": offer.pk,
            "merchant_name": offer.merchant.name,
            "cheapest": self.cheapest,
            "sold_out": self.sold_out,
            "low_stock": self.low_stock,
            "stock": self.stock,
            # Said only where it differs from the offer's stock: "2 can ship from one warehouse".
            "one_warehouse": self.one_warehouse and self.stock != offer.stock,
            "price": format_money(offer.unit_price),
            "max_quantity": self.max_quantity,
            "shipping": shipping_terms(shipping),
            "discount": discount_terms(terms.discount) if terms is not None else "",
            "zone_rate": bool(shipping is not None and shipping.zone_prefix),
            # An offer that cannot take the line (sold out, short) has no figure to compare.
            "delivered": format_money(cost.increment) if cost and cost.eligible else "",
            "delivered_label": delivered_label(cost) if cost else "",
            "delivered_note": delivered_note(cost, offer.merchant.name) if cost else "",
        }


def delivered_label(cost: DeliveredCost) -> str:
    """What the figure is: the offer's delivered price when it stands alone in the cart, else
    what it adds to the cart's total (it shares a parcel, unlocks free shipping or a discount,
    or moves units already in the cart)."""
    alone = not cost.joins_cart and cost.increment == cost.items + cost.shipping_change
    return "delivered" if alone and not cost.discount_change else "added to your cart total"


def delivered_note(cost: DeliveredCost, merchant_name: str) -> str:
    """How the delivered figure is made up, in words: what shipping the offer adds and what
    it changes in the shopper's order from that merchant."""
    parts = [format_money(cost.items)]
    if cost.shipping_change > 0:
        parts.append(f"+ {format_money(cost.shipping_change)} shipping")
    elif cost.shipping_change < 0:
        saved = format_money(-cost.shipping_change)
        if cost.unlocks_free_shipping:
            parts.append(f"{MINUS} {saved}: your order from {merchant_name} ships free")
        else:
            parts.append(f"{MINUS} {saved} shipping in your cart")
    elif cost.joins_cart:
        parts[0] += f", no extra shipping (joins your order from {merchant_name})"
    else:
        parts[0] += ", free shipping"
    if cost.discount_change > 0:
        parts.append(f"{MINUS} {format_money(cost.discount_change)} multi-buy discount")
    moved = cost.increment - cost.items - cost.shipping_change + cost.discount_change
    if moved:
        # The product's line moves here from another merchant: its old price comes off.
        sign = "+" if moved > 0 else MINUS
        parts.append(f"{sign} {format_money(abs(moved))} for the units already in your cart")
    return " ".join(parts)


def delivered_basis_text(postal_code: str) -> str:
    """What the delivered figures assume about the destination, said once per page."""
    if postal_code:
        return f"with shipping to {postal_code}"
    return "with each merchant's standard shipping (enter your postal code for your area's)"


def product_detail(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        product = product_cached_get(slug=slug, request=request)
    except NotFound as error:
        raise Http404(error.message) from error
    return render_product(request, product=product)


def render_product(
    request: HttpRequest,
    *,
    product: "ProductWithBestOffer",
    add_form: AddToCartForm | None = None,
    add_target: str | None = None,
    status: int = 200,
) -> HttpResponse:
    """The product page; after a refused add, ``add_form`` carries the errors and
    ``add_target`` names the form that failed (an offer id, or ``"cheapest"``).

    Offers are ranked by delivered cost: what one unit adds to the shopper's cart for its
    postal code (``storefront.carts.delivered``); the page varies with what of the cart that
    depends on (the product's merchants' lines), so every cart buying nothing from them shares
    the empty cart's rendering for its postal code."""
    cart = request_cart_find(request)
    postal_code = cart.postal_code if cart else ""
    versions = (SHARED, product_version_name(product.pk))
    # Only the cart's lines from merchants selling the product change its delivered costs:
    # one query for those (their terms from the zone index).
    summary = (
        cart_pricing_summary_for_product(cart=cart, product_id=product.pk)
        if cart is not None
        else None
    )
    basis = CartBasis.from_summary(summary, product_id=product.pk)
    line = basis.product_line.line if basis.product_line is not None else None

    def rows() -> list[OfferRow]:
        offers = product_offers_read(product=product)
        # The offers carry their merchants; only the zones are left, from the zone index.
        terms = merchant_terms_for_merchants(
            merchants=[offer.merchant for offer in offers], postal_code=postal_code
        )
        # Version 2 merchants ship from warehouses: their rates and stock there.
        nodes = delivered_nodes_read(offers=offers, basis=basis, postal_code=postal_code)
        costs = offers_delivered_cost(
            offers=offers, terms=terms, basis=basis, nodes=nodes, weight_g=product.weight_g
        )
        best = delivered_cheapest(costs)
        by_id = {offer.pk: offer for offer in offers}
        ranked = [by_id[cost.offer_id] for cost in costs]
        # Offers without terms (none in practice) keep their place at the end.
        ranked += [offer for offer in offers if offer.pk not in {c.offer_id for c in costs}]
        delivered = {cost.offer_id: cost for cost in costs}
        return [
            OfferRow(
                offer=offer,
                terms=terms.get(offer.merchant_id),
                cheapest=best is not None and offer.pk == best.offer_id,
                delivered=delivered.get(offer.pk),
                nodes=nodes,
            )
            for offer in ranked
        ]

    failed_quantity = add_form.data.get("quantity") if add_form is not None else None
    # Only a cache miss reads the offers and their terms (the counts are callables the
    # template calls, so a hit never reads them either).
    offer_rows = SimpleLazyObject(rows)
    offer_views = SimpleLazyObject(lambda: [row.view() for row in offer_rows])
    context = {
        "product": product,
        "rows": offer_rows,
        "offer_views": offer_views,
        # The cheapest delivered offer as its row shows it (None: nothing can be bought).
        "best_offer": lambda: next((view for view in offer_views if view["cheapest"]), None),
        "delivered_basis": delivered_basis_text(postal_code),
        # The heading counts what the buy box and the catalog card count: offers that can be
        # bought now. Sold-out offers stay listed, counted apart.
        "buyable_count": lambda: sum(not row.sold_out for row in offer_rows),
        "sold_out_count": lambda: sum(row.sold_out for row in offer_rows),
        "cart_line": line,
        "postal_code": postal_code,
        "add_form": add_form,
        "add_target": add_target,
        "failed_quantity": failed_quantity,
    }
    # A refused add shows the shopper's own input and errors: not shared.
    spec = None
    if add_form is None:
        spec = FragmentSpec("product", versions, (product.slug, postal_code, basis.vary()))
    context["product_fragment"] = spec
    if status != 200:
        return render(request, "web/product.html", context, status=status)
    return render_shared_page(request, "web/product.html", context, spec)
