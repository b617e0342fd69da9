import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from smartcart.prepared import PreparedQuery
from storefront.models import Cart, Offer, ShippingZone
from tests.carts import cart_with_choices
from tests.factories import CartFactory, MerchantFactory, ShippingZoneFactory, UserFactory

pytestmark = pytest.mark.django_db


def _cart_rows(cart_id):
    return (
        Cart.objects.filter(pk=cart_id)
        .order_by("lines__created_at", "lines__id")
        .values_list("id", "owner_id", "version", "created_at", "lines__id", "lines__offer__active")
    )


def _offer_rows(product_ids):
    return (
        Offer.objects.filter(product_id__in=product_ids, active=True)
        .order_by("id")
        .values_list("id", "product_id", "unit_price", "stock", "merchant__active", "updated_at")
    )


def test_rows_are_what_the_orm_returns_converted_alike():
    carts = [cart_with_choices(owner=UserFactory(), lines=n) for n in (1, 3)]
    carts.append(CartFactory(owner=UserFactory()))  # no lines: one row of NULLs
    query = PreparedQuery(Cart, _cart_rows)
    for cart in carts:
        rows = query.rows(cart.pk)
        assert rows == list(_cart_rows(cart.pk))
        assert all(isinstance(row, tuple) for row in rows)
    assert query.rows(max(cart.pk for cart in carts) + 1) == []
    row = query.rows(carts[0].pk)[0]
    assert row[3].tzinfo is not None and row[5] is True  # aware datetime, real bool


def test_in_lists_compile_once_per_length():
    cart = cart_with_choices(owner=UserFactory(), lines=3)
    products = sorted(set(cart.lines.values_list("product_id", flat=True)))
    query = PreparedQuery(Offer, _offer_rows)
    for ids in (products, products[:1], [products[1], products[0]], [products[2], 10**9]):
        assert query.rows(ids) == list(_offer_rows(ids))
    assert query.rows(tuple(products)) == list(_offer_rows(products))
    assert len(query._compiled) == 3  # lengths 3, 1 and 2
    assert query.rows([*products, 10**9]) == list(_offer_rows(products))
    assert len(query._compiled) == 4


def test_the_statement_is_seen_like_any_other():
    cart = cart_with_choices(owner=UserFactory(), lines=2)
    query = PreparedQuery(Cart, _cart_rows)
    query.rows(cart.pk)
    with CaptureQueriesContext(connection) as queries:
        query.rows(cart.pk)
    assert len(queries) == 1 and str(cart.pk) in queries[0]["sql"]


def test_strings_and_ids_together():
    merchant = MerchantFactory()
    for prefix in ("", "1", "10", "SW"):
        ShippingZoneFactory(merchant=merchant, postal_prefix=prefix)

    def zones(merchant_id, prefixes):
        return (
            ShippingZone.objects.filter(merchant_id=merchant_id, postal_prefix__in=prefixes)
            .order_by("postal_prefix")
            .values_list("postal_prefix", "base_fee")
        )

    query = PreparedQuery(ShippingZone, zones)
    for prefixes in (["10", "1", ""], [""], ("SW1", "SW", "S", ""), ["X"]):
        assert query.rows(merchant.pk, prefixes) == list(zones(merchant.pk, prefixes))


def test_misuse_is_refused():
    ignored = PreparedQuery(Cart, lambda cart_id: Cart.objects.values_list("id"))
    with pytest.raises(ValueError, match="exactly once"):
        ignored.rows(1)
    query = PreparedQuery(Cart, _cart_rows)
    for value in (1.5, None, True, [], [1, "1"], b"1"):
        with pytest.raises(TypeError):
            query.rows(value)
    with pytest.raises(ValueError):  # the ORM refuses a string for an id, as it would
        query.rows("1")
