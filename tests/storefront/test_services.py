import pytest
from django.contrib.auth.models import AnonymousUser

from storefront.accounts import services as account_services
from storefront.carts import services as cart_services
from storefront.catalog import services as catalog_services
from storefront.errors import Conflict, NotFound, ValidationFailed
from storefront.models import (
    MAX_CART_LINES,
    MAX_LINE_QUANTITY,
    Cart,
    CartLine,
    CheapestOfferRefresh,
    Merchant,
    Offer,
    Product,
)
from tests.factories import (
    CartFactory,
    CartLineFactory,
    CategoryFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    UserFactory,
    valid_gtin13,
)

pytestmark = pytest.mark.django_db


def version_in_db(cart: Cart) -> int:
    return Cart.objects.values_list("version", flat=True).get(pk=cart.pk)


class TestCartGetOrCreate:
    def test_user_cart_is_created_once(self):
        user = UserFactory()
        cart = cart_services.cart_get_or_create(user=user)
        assert cart.owner == user and cart.version == 1
        assert cart_services.cart_get_or_create(user=user, session_key="ignored") == cart
        assert Cart.objects.count() == 1

    def test_anonymous_cart_by_session(self):
        cart = cart_services.cart_get_or_create(user=AnonymousUser(), session_key="s-1")
        assert cart.owner is None and cart.session_key == "s-1"
        assert cart_services.cart_get_or_create(session_key="s-1") == cart

    def test_neither_user_nor_session_is_refused(self):
        with pytest.raises(ValidationFailed) as raised:
            cart_services.cart_get_or_create(user=AnonymousUser())
        assert raised.value.code == "cart_owner_missing"


class TestCartLineAdd:
    def test_new_line_snapshots_the_price_and_bumps_the_version(self):
        cart = CartFactory()
        offer = OfferFactory(unit_price=1234)
        line = cart_services.cart_line_add(cart=cart, offer=offer, quantity=2)
        assert (line.quantity, line.unit_price_snapshot, line.product_id) == (
            2,
            1234,
            offer.product_id,
        )
        assert cart.version == version_in_db(cart) == 2

    def test_same_offer_again_adds_quantity(self):
        cart = CartFactory()
        offer = OfferFactory()
        cart_services.cart_line_add(cart=cart, offer=offer)
        line = cart_services.cart_line_add(cart=cart, offer=offer, quantity=3)
        assert line.quantity == 4
        assert CartLine.objects.filter(cart=cart).count() == 1
        assert version_in_db(cart) == 3

    def test_same_product_from_another_merchant_moves_the_line(self):
        cart = CartFactory()
        first = OfferFactory(unit_price=1000)
        second = OfferFactory(product=first.product, unit_price=900)
        cart_services.cart_line_add(cart=cart, offer=first, quantity=2)
        line = cart_services.cart_line_add(cart=cart, offer=second)
        assert (line.offer_id, line.quantity, line.unit_price_snapshot) == (second.pk, 3, 900)
        assert CartLine.objects.filter(cart=cart).count() == 1

    @pytest.mark.parametrize(
        ("offer_kwargs", "code"),
        [
            ({"active": False}, "offer_inactive"),
            ({"merchant__active": False}, "offer_inactive"),
            ({"stock": 1}, "insufficient_stock"),
            ({"stock": 0}, "insufficient_stock"),
        ],
    )
    def test_unbuyable_offers_are_conflicts_and_change_nothing(self, offer_kwargs, code):
        cart = CartFactory()
        offer = OfferFactory(**offer_kwargs)
        with pytest.raises(Conflict) as raised:
            cart_services.cart_line_add(cart=cart, offer=offer, quantity=2)
        assert raised.value.code == code
        assert not CartLine.objects.exists()
        assert version_in_db(cart) == 1

    def test_stock_is_checked_against_the_total_quantity(self):
        cart = CartFactory()
        offer = OfferFactory(stock=3)
        cart_services.cart_line_add(cart=cart, offer=offer, quantity=2)
        with pytest.raises(Conflict) as raised:
            cart_services.cart_line_add(cart=cart, offer=offer, quantity=2)
        assert "Only 3 in stock" in raised.value.message
        assert CartLine.objects.get().quantity == 2

    def test_stale_offer_instance_is_reread(self):
        cart = CartFactory()
        offer = OfferFactory(unit_price=1000)
        Offer.objects.filter(pk=offer.pk).update(unit_price=1500, stock=0)
        with pytest.raises(Conflict):
            cart_services.cart_line_add(cart=cart, offer=offer)
        Offer.objects.filter(pk=offer.pk).update(stock=None)
        assert cart_services.cart_line_add(cart=cart, offer=offer).unit_price_snapshot == 1500

    @pytest.mark.parametrize(
        ("quantity", "code"),
        [
            (0, "quantity_too_small"),
            (-1, "quantity_too_small"),
            (MAX_LINE_QUANTITY + 1, "quantity_too_large"),
            ("2", "quantity_invalid"),
            (1.5, "quantity_invalid"),
            (True, "quantity_invalid"),
        ],
    )
    def test_bad_quantities_are_refused(self, quantity, code):
        with pytest.raises(ValidationFailed) as raised:
            cart_services.cart_line_add(cart=CartFactory(), offer=OfferFactory(), quantity=quantity)
        assert (raised.value.code, raised.value.field) == (code, "quantity")

    def test_growing_past_the_maximum_quantity_is_refused(self):
        cart = CartFactory()
        offer = OfferFactory()
        cart_services.cart_line_add(cart=cart, offer=offer, quantity=MAX_LINE_QUANTITY)
        with pytest.raises(ValidationFailed):
            cart_services.cart_line_add(cart=cart, offer=offer)

    def test_a_full_cart_refuses_a_new_product_but_not_more_of_one(self):
        cart = CartFactory()
        lines = CartLineFactory.create_batch(MAX_CART_LINES, cart=cart)
        with pytest.raises(Conflict) as raised:
            cart_services.cart_line_add(cart=cart, offer=OfferFactory())
        assert raised.value.code == "cart_full"
        cart_services.cart_line_add(cart=cart, offer=lines[0].offer)


class TestCartLineChanges:
    def test_set_quantity_bumps_only_on_change(self):
        line = CartLineFactory(quantity=1)
        cart = line.cart
        cart_services.cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=5)
        assert version_in_db(cart) == 2
        cart_services.cart_line_set_quantity(cart=cart, line_id=line.pk, quantity=5)
        assert version_in_db(cart) == 2
        assert CartLine.objects.get().quantity == 5

    def test_zero_quantity_is_refused_with_a_hint_to_remove(self):
        line = CartLineFactory()
        with pytest.raises(ValidationFailed) as raised:
            cart_services.cart_line_set_quantity(cart=line.cart, line_id=line.pk, quantity=0)
        assert "remove" in raised.value.message

    def test_raising_needs_stock_lowering_never_does(self):
        line = CartLineFactory(quantity=4, offer__stock=4)
        Offer.objects.filter(pk=line.offer_id).update(stock=1)
        with pytest.raises(Conflict):
            cart_services.cart_line_set_quantity(cart=line.cart, line_id=line.pk, quantity=5)
        cart_services.cart_line_set_quantity(cart=line.cart, line_id=line.pk, quantity=2)
        assert CartLine.objects.get().quantity == 2

    def test_another_carts_line_is_not_found(self):
        line = CartLineFactory()
        stranger = CartFactory()
        with pytest.raises(NotFound):
            cart_services.cart_line_set_quantity(cart=stranger, line_id=line.pk, quantity=2)
        with pytest.raises(NotFound):
            cart_services.cart_line_remove(cart=stranger, line_id=line.pk)
        with pytest.raises(NotFound):
            cart_services.cart_line_remove(cart=stranger, line_id="not-an-id")
        assert CartLine.objects.get().quantity == 1
        assert version_in_db(stranger) == 1

    def test_remove_deletes_and_bumps(self):
        line = CartLineFactory()
        cart_services.cart_line_remove(cart=line.cart, line_id=line.pk)
        assert not CartLine.objects.exists()
        assert version_in_db(line.cart) == 2

    def test_set_offer_switches_merchant_and_retakes_the_snapshot(self):
        line = CartLineFactory(quantity=2)
        other = OfferFactory(product=line.product, unit_price=555)
        cart_services.cart_line_set_offer(cart=line.cart, line_id=line.pk, offer=other)
        line.refresh_from_db()
        assert (line.offer_id, line.quantity, line.unit_price_snapshot) == (other.pk, 2, 555)
        with pytest.raises(ValidationFailed):
            cart_services.cart_line_set_offer(cart=line.cart, line_id=line.pk, offer=OfferFactory())


class TestDestination:
    def test_normalized_stored_and_bumped_once(self):
        cart = CartFactory()
        cart_services.cart_destination_set(cart=cart, postal_code=" sw1a  1aa ")
        assert cart.postal_code == "SW1A 1AA"
        cart_services.cart_destination_set(cart=cart, postal_code="SW1A 1AA")
        assert Cart.objects.get().postal_code == "SW1A 1AA"
        assert version_in_db(cart) == 2

    @pytest.mark.parametrize("code", ["12", "1234567890AB", "12$45", "-123"])
    def test_malformed_codes_are_refused(self, code):
        cart = CartFactory(postal_code="10115")
        with pytest.raises(ValidationFailed) as raised:
            cart_services.cart_destination_set(cart=cart, postal_code=code)
        assert (raised.value.code, raised.value.field) == ("postal_code_invalid", "postal_code")
        assert Cart.objects.get().postal_code == "10115"

    def test_empty_clears_the_destination(self):
        cart = CartFactory(postal_code="10115")
        cart_services.cart_destination_set(cart=cart, postal_code=None)
        assert Cart.objects.get().postal_code == ""


class TestMerge:
    def test_anonymous_lines_move_in_and_win_on_shared_products(self):
        user_cart = CartFactory()
        kept = CartLineFactory(cart=user_cart, quantity=1)
        shared = CartLineFactory(cart=user_cart, quantity=1)
        anonymous = CartFactory(owner=None, session_key="anon", postal_code="10115")
        newer = OfferFactory(product=shared.product, unit_price=777)
        CartLineFactory(cart=anonymous, offer=newer, quantity=3)
        moved = CartLineFactory(cart=anonymous)

        merged = cart_services.cart_merge(source=anonymous, target=user_cart)

        assert merged == user_cart
        assert not Cart.objects.filter(pk=anonymous.pk).exists()
        lines = {line.product_id: line for line in CartLine.objects.filter(cart=user_cart)}
        assert set(lines) == {kept.product_id, shared.product_id, moved.product_id}
        assert (lines[shared.product_id].offer_id, lines[shared.product_id].quantity) == (
            newer.pk,
            3,
        )
        assert Cart.objects.get(pk=user_cart.pk).postal_code == "10115"
        assert version_in_db(user_cart) == 2

    def test_target_keeps_its_own_destination(self):
        user_cart = CartFactory(postal_code="20095")
        anonymous = CartFactory(owner=None, session_key="anon", postal_code="10115")
        CartLineFactory(cart=anonymous)
        cart_services.cart_merge(source=anonymous, target=user_cart)
        assert Cart.objects.get(pk=user_cart.pk).postal_code == "20095"

    def test_empty_source_is_just_deleted(self):
        user_cart = CartFactory()
        anonymous = CartFactory(owner=None, session_key="anon")
        cart_services.cart_merge(source=anonymous, target=user_cart)
        assert list(Cart.objects.all()) == [user_cart]
        assert version_in_db(user_cart) == 1

    def test_merging_a_cart_into_itself_changes_nothing(self):
        line = CartLineFactory()
        cart_services.cart_merge(source=line.cart, target=line.cart)
        assert CartLine.objects.count() == 1


class TestCatalogServices:
    def test_product_with_offers_is_created_whole(self):
        merchant = MerchantFactory()
        product = catalog_services.product_create(
            gtin="400 6381 333931",
            name="  Highlighter  ",
            category=CategoryFactory(),
            offers=[
                catalog_services.OfferInput(merchant=merchant, merchant_sku="H-1", unit_price=199)
            ],
        )
        assert (product.gtin, product.name, product.slug) == (
            "4006381333931",
            "Highlighter",
            "highlighter-4006381333931",
        )
        assert product.offers.get().unit_price == 199

    def test_nothing_is_half_written_when_one_offer_is_invalid(self):
        merchant = MerchantFactory()
        with pytest.raises(ValidationFailed) as raised:
            catalog_services.product_create(
                gtin=valid_gtin13(77),
                name="Lamp",
                category=CategoryFactory(),
                offers=[
                    catalog_services.OfferInput(
                        merchant=merchant, merchant_sku="L-1", unit_price=999
                    ),
                    catalog_services.OfferInput(
                        merchant=merchant, merchant_sku="L-2", unit_price=-5
                    ),
                ],
            )
        assert raised.value.field == "unit_price"
        assert not Product.objects.exists()
        assert not Offer.objects.exists()

    def test_bad_gtin_names_the_field(self):
        with pytest.raises(ValidationFailed) as raised:
            catalog_services.product_create(
                gtin="4006381333932", name="Pen", category=CategoryFactory()
            )
        assert (raised.value.field, raised.value.code) == ("gtin", "gtin_check_digit")
        assert "expected 1" in raised.value.message

    def test_duplicate_active_offer_is_a_clear_validation_error(self):
        offer = OfferFactory()
        with pytest.raises(ValidationFailed) as raised:
            catalog_services.offer_create(
                product=offer.product, merchant=offer.merchant, merchant_sku="X", unit_price=1
            )
        assert "already has an active offer" in raised.value.message
        assert Offer.objects.count() == 1

    def test_offer_update_changes_only_what_is_given(self):
        offer = OfferFactory(unit_price=1000, stock=5)
        catalog_services.offer_update(offer=offer, stock=None)
        offer.refresh_from_db()
        assert (offer.unit_price, offer.stock) == (1000, None)
        with pytest.raises(ValidationFailed):
            catalog_services.offer_update(offer=offer, unit_price=-1)
        offer.refresh_from_db()
        assert offer.unit_price == 1000

    def test_product_create_rejects_a_second_product_with_the_gtin(self):
        existing = ProductFactory()
        with pytest.raises(ValidationFailed) as raised:
            catalog_services.product_create(
                gtin=existing.gtin, name="Twin", category=existing.category
            )
        assert raised.value.field == "gtin"


def test_password_reset_mail_goes_to_active_accounts_only():
    from django.core import mail

    from tests.factories import UserFactory

    UserFactory(username="ann", email="ann@example.com")
    UserFactory(username="old", email="old@example.com", is_active=False)
    for email in ("ann@example.com", "old@example.com", "nobody@example.com"):
        account_services.password_reset_mail_send(
            email=email,
            domain="shop.example.com",
            use_https=True,
            extra_context={"link_valid_for": "3 days"},
        )
    (message,) = mail.outbox
    assert message.to == ["ann@example.com"]
    assert "https://shop.example.com/accounts/password/reset/" in message.body
    assert "3 days" in message.body
    with pytest.raises(ValidationFailed):
        account_services.password_reset_mail_send(
            email="not-an-address", domain="x", use_https=False
        )


# --- catalog: activate, deactivate, refresh the cheapest offer ------------------------------


def _marked_products() -> set[int]:
    return set(CheapestOfferRefresh.objects.values_list("product_id", flat=True))


def _nothing_marked() -> None:
    # Saving offers and products marks them through signals; start from a clean slate.
    CheapestOfferRefresh.objects.all().delete()


def test_offers_active_set_updates_and_marks_their_products():
    kept, switched = OfferFactory(), OfferFactory()
    _nothing_marked()
    updated = catalog_services.offers_active_set(
        offers=Offer.objects.filter(pk=switched.pk), active=False
    )
    assert updated == 1
    assert set(Offer.objects.filter(active=False).values_list("pk", flat=True)) == {switched.pk}
    assert switched.product_id in _marked_products()
    assert kept.product_id not in _marked_products()


def test_merchants_active_set_marks_every_product_they_sell():
    merchant = MerchantFactory()
    offers = OfferFactory.create_batch(2, merchant=merchant)
    _nothing_marked()
    updated = catalog_services.merchants_active_set(
        merchants=Merchant.objects.filter(pk=merchant.pk), active=False
    )
    merchant.refresh_from_db()
    assert (updated, merchant.active) == (1, False)
    assert {offer.product_id for offer in offers} <= _marked_products()


def test_products_cheapest_refresh_marks_the_products():
    first, second = ProductFactory(), ProductFactory()
    _nothing_marked()
    marked = catalog_services.products_cheapest_refresh(
        products=Product.objects.filter(pk=first.pk)
    )
    assert marked == 1
    assert _marked_products() == {first.pk}
    assert second.pk not in _marked_products()
