import pytest

from gpu_engine.reference import reference_cost
from storefront.carts import pricing_summary, services
from storefront.carts import selectors as cart_selectors
from storefront.carts.pricing import PricedLine, Shipment, shipments_problem
from storefront.catalog import selectors
from storefront.catalog.zone_index import zone_index_invalidate
from storefront.errors import NotFound, ValidationFailed
from storefront.models import Offer
from storefront.search import search_prepare
from tests.factories import (
    CartFactory,
    CartLineFactory,
    CategoryFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


class TestProductList:
    def test_search_by_name_words_by_gtin_and_by_sku(self):
        pen = ProductFactory(name="Blue Gel Pen")
        ProductFactory(name="Red Pencil")
        OfferFactory(product=pen, merchant_sku="ACME-PEN-7")
        assert list(selectors.product_list(query="gel blue")) == [pen]
        assert list(selectors.product_list(query=pen.gtin)) == [pen]
        spaced = f"{pen.gtin[:1]} {pen.gtin[1:7]}-{pen.gtin[7:]}"
        assert list(selectors.product_list(query=spaced)) == [pen]
        assert list(selectors.product_list(query="acme-pen-7")) == [pen]
        assert not selectors.product_list(query="gel red").exists()

    def test_filter_by_category_slug_or_id_and_by_merchant(self):
        books = CategoryFactory(slug="books")
        book = ProductFactory(category=books)
        other = ProductFactory()
        merchant = MerchantFactory()
        OfferFactory(product=other, merchant=merchant)
        OfferFactory(product=book, merchant=merchant, active=False)
        assert list(selectors.product_list(category="books")) == [book]
        assert list(selectors.product_list(category=books.pk)) == [book]
        assert list(selectors.product_list(category=str(books.pk))) == [book]
        assert list(selectors.product_list(merchant_id=merchant.pk)) == [other]

    def test_cheapest_buyable_offer_is_annotated(self):
        product = ProductFactory()
        cheap_but_inactive = OfferFactory(product=product, unit_price=100, active=False)
        OfferFactory(product=product, unit_price=150, stock=0)
        OfferFactory(product=product, unit_price=120, merchant__active=False)
        low = MerchantFactory(name="Alpha")
        high = MerchantFactory(name="Beta")
        best = OfferFactory(product=product, unit_price=500, merchant=low, stock=None)
        OfferFactory(product=product, unit_price=500, merchant=high, stock=3)
        OfferFactory(product=product, unit_price=900)
        (row,) = selectors.product_list()
        assert cheap_but_inactive.pk != row.best_offer_id
        assert (row.best_price, row.best_offer_id, row.best_merchant_name) == (
            500,
            best.pk,
            "Alpha",
        )
        assert row.best_merchant_id == low.pk
        assert row.offer_count == 3

    def test_unsold_products_have_no_best_offer_and_go_last_by_price(self):
        unsold = ProductFactory(name="A unsold")
        cheap = OfferFactory(unit_price=100, product__name="B cheap").product
        dear = OfferFactory(unit_price=900, product__name="C dear").product
        assert list(selectors.product_list(ordering="price")) == [cheap, dear, unsold]
        assert list(selectors.product_list(ordering="-price")) == [dear, cheap, unsold]
        assert list(selectors.product_list(available_only=True, ordering="name")) == [cheap, dear]
        assert selectors.product_list().get(pk=unsold.pk).best_price is None

    def test_unknown_ordering_is_refused(self):
        with pytest.raises(ValidationFailed) as raised:
            selectors.product_list(ordering="popularity")
        assert raised.value.field == "ordering"

    def test_one_query_for_a_page_whatever_its_size(self, django_assert_num_queries):
        for _ in range(30):
            OfferFactory.create_batch(3, product=ProductFactory())
        with django_assert_num_queries(1):
            page = list(selectors.product_list()[:24])
            assert all(product.category.name for product in page)
        # A search is prepared first: exact GTIN/SKU hits (and on PostgreSQL the categories
        # named), then whether the words match as typed (else: typo tolerance).
        with django_assert_num_queries(2):
            prepared = search_prepare("product")
        with django_assert_num_queries(1):
            page = list(selectors.product_list(query=prepared)[:24])
            assert all(product.category.name for product in page)
            assert all(product.best_price == 1999 for product in page)

    def test_product_get_by_id_or_slug(self):
        product = OfferFactory(unit_price=300).product
        assert selectors.product_get(product_id=product.pk).best_price == 300
        assert selectors.product_get(slug=product.slug) == product
        with pytest.raises(NotFound):
            selectors.product_get(product_id=10**9)
        with pytest.raises(NotFound):
            selectors.product_get(product_id="abc")


class TestOffers:
    def test_product_offers_cheapest_first_with_merchants(self, django_assert_num_queries):
        product = ProductFactory()
        dear = OfferFactory(product=product, unit_price=900)
        cheap = OfferFactory(product=product, unit_price=100)
        sold_out = OfferFactory(product=product, unit_price=500, stock=0)
        inactive = OfferFactory(product=product, unit_price=50, active=False)
        with django_assert_num_queries(1):
            offers = list(selectors.product_offer_list(product=product))
            assert [offer.merchant.name for offer in offers]
        assert offers == [cheap, sold_out, dear]
        assert inactive in selectors.product_offer_list(product=product.pk, include_inactive=True)

    def test_offer_get(self):
        offer = OfferFactory(active=False)
        assert selectors.offer_get(offer_id=offer.pk) == offer
        with pytest.raises(NotFound):
            selectors.offer_get(offer_id=offer.pk, buyable_only=True)

    def test_categories_and_merchants_are_counted(self):
        offer = OfferFactory()
        MerchantFactory(active=False)
        (category,) = selectors.category_list()
        assert category.product_count == 1
        (merchant,) = selectors.merchant_list()
        assert (merchant, merchant.offer_count, merchant.zone_count) == (offer.merchant, 1, 0)
        assert selectors.merchant_list(active_only=False).count() == 2
        assert selectors.merchant_get(slug=offer.merchant.slug) == offer.merchant


class TestCarts:
    def test_cart_get_only_for_its_owner_or_session(self, django_assert_num_queries):
        line = CartLineFactory()
        cart = line.cart
        with django_assert_num_queries(2):
            found = cart_selectors.cart_get(cart_id=cart.pk, owner=cart.owner)
            assert [line.offer.merchant.name for line in found.lines.all()]
        with pytest.raises(NotFound):
            cart_selectors.cart_get(cart_id=cart.pk, owner=UserFactory())
        with pytest.raises(NotFound):
            cart_selectors.cart_get(cart_id=cart.pk, session_key="guess")
        anonymous = CartFactory(owner=None, session_key="s")
        assert cart_selectors.cart_get(cart_id=anonymous.pk, session_key="s") == anonymous

    def test_cart_find_never_creates(self):
        user = UserFactory()
        assert cart_selectors.cart_find(user=user) is None
        cart = CartFactory(owner=user)
        assert cart_selectors.cart_find(user=user) == cart
        assert cart_selectors.cart_find(session_key="") is None


class TestCartPricingSummary:
    def test_groups_by_merchant_with_zone_discount_and_free_shipping(
        self, django_assert_num_queries
    ):
        zoned = MerchantFactory(base_fee=499, per_extra_unit=100, free_over=None)
        ShippingZoneFactory(merchant=zoned, postal_prefix="10", base_fee=199, per_extra_unit=0)
        discounter = MerchantFactory(
            base_fee=500, per_extra_unit=0, free_over=4000, with_discount=True
        )
        cart = CartFactory(postal_code="10115")
        services.cart_line_add(cart=cart, offer=OfferFactory(merchant=zoned, unit_price=1000))
        services.cart_line_add(
            cart=cart, offer=OfferFactory(merchant=zoned, unit_price=250), quantity=2
        )
        services.cart_line_add(
            cart=cart, offer=OfferFactory(merchant=discounter, unit_price=1500), quantity=3
        )

        zone_index_invalidate()
        # The lines (with offers and merchants); merchants and zones to rebuild the zone index.
        with django_assert_num_queries(3):
            pricing_summary.cart_pricing_summary(cart=cart)
        with django_assert_num_queries(1):
            summary = pricing_summary.cart_pricing_summary(cart=cart)

        first, second = summary.groups
        assert first.merchant_id == zoned.pk
        assert first.shipping_rule.zone_prefix == "10"
        # 1000 + 2 x 250 = 1500, 3 units, zone fee 199 flat.
        assert (first.subtotal, first.units, first.discount, first.shipping, first.total) == (
            1500,
            3,
            0,
            199,
            1699,
        )
        assert first.missing_for_free_shipping is None
        # 3 x 1500 = 4500, 5% off = 225, goods 4275 >= 4000: free shipping.
        assert (second.subtotal, second.discount, second.shipping, second.total) == (
            4500,
            225,
            0,
            4275,
        )
        assert second.missing_for_free_shipping == 0
        assert (summary.subtotal, summary.discount, summary.shipping, summary.total) == (
            6000,
            225,
            199,
            5974,
        )
        assert (summary.units, summary.line_count, summary.version) == (6, 3, 4)

    def test_total_matches_the_engines_reference_pricer(self):
        cart = CartFactory(postal_code="80331")
        merchants = [
            MerchantFactory(base_fee=fee, per_extra_unit=extra, free_over=free)
            for fee, extra, free in [(499, 100, 3000), (0, 0, None), (350, 250, 10_000)]
        ]
        ShippingZoneFactory(merchant=merchants[2], postal_prefix="8", base_fee=900)
        for index, quantity in enumerate([1, 2, 3, 1, 4]):
            offer = OfferFactory(merchant=merchants[index % 3], unit_price=799 + 313 * index)
            services.cart_line_add(cart=cart, offer=offer, quantity=quantity)
        summary = pricing_summary.cart_pricing_summary(cart=cart)
        shipments = [
            Shipment(
                merchant_id=group.merchant_id,
                shipping=group.shipping_rule,
                discount=group.discount_rule,
                lines=tuple(
                    PricedLine(line.line_id, line.quantity, line.unit_price) for line in group.lines
                ),
            )
            for group in summary.groups
        ]
        assignment = {
            str(line.line_id): str(group.merchant_id)
            for group in summary.groups
            for line in group.lines
        }
        assert summary.total == reference_cost(shipments_problem(shipments), assignment)
        assert summary.groups[2].shipping_rule.base_fee == 900

    def test_unavailable_lines_are_listed_apart_and_price_changes_flagged(self):
        cart = CartFactory()
        kept = services.cart_line_add(cart=cart, offer=OfferFactory(unit_price=1000))
        gone = services.cart_line_add(cart=cart, offer=OfferFactory())
        short = services.cart_line_add(cart=cart, offer=OfferFactory(stock=5), quantity=4)
        Offer.objects.filter(pk=kept.offer_id).update(unit_price=1100)
        Offer.objects.filter(pk=gone.offer_id).update(active=False)
        Offer.objects.filter(pk=short.offer_id).update(stock=2)

        summary = pricing_summary.cart_pricing_summary(cart=cart)

        (group,) = summary.groups
        (line,) = group.lines
        assert (line.line_id, line.unit_price, line.price_changed, line.price_change) == (
            kept.pk,
            1100,
            True,
            100,
        )
        problems = {line.line_id: line.problem for line in summary.unavailable}
        assert problems == {gone.pk: "offer_inactive", short.pk: "insufficient_stock"}
        assert summary.total == 1100 + 499
        assert [line.line_id for line in summary.price_changes] == [kept.pk]

    def test_empty_cart(self):
        summary = pricing_summary.cart_pricing_summary(cart=CartFactory())
        assert summary.is_empty
        assert (summary.total, summary.groups, summary.unavailable) == (0, (), ())
