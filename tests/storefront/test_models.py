"""Invariants hold twice: model validation explains them, the database enforces them."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError

from storefront.models import Cart, CartLine, Merchant, Offer, ShippingZone
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


def _integrity_error(create) -> IntegrityError:
    with pytest.raises(IntegrityError) as raised, transaction.atomic():
        create()
    return raised.value


def _messages(error: ValidationError) -> str:
    return " ".join(error.messages)


class TestOffer:
    def test_negative_price_is_refused_by_validation_and_database(self):
        offer = OfferFactory.build(
            product=ProductFactory(), merchant=MerchantFactory(), unit_price=-1
        )
        with pytest.raises(ValidationError) as raised:
            offer.full_clean()
        assert "unit_price" in raised.value.message_dict
        _integrity_error(offer.save)
        assert Offer.objects.count() == 0

    def test_negative_stock_is_refused(self):
        offer = OfferFactory.build(product=ProductFactory(), merchant=MerchantFactory(), stock=-2)
        with pytest.raises(ValidationError):
            offer.full_clean()
        _integrity_error(offer.save)

    def test_second_active_offer_of_a_merchant_for_a_product_is_refused(self):
        first = OfferFactory()
        duplicate = OfferFactory.build(product=first.product, merchant=first.merchant)
        with pytest.raises(ValidationError) as raised:
            duplicate.full_clean()
        assert "already has an active offer" in _messages(raised.value)
        error = _integrity_error(duplicate.save)
        assert "offer_one_active_per_product_merchant" in str(error) or "UNIQUE" in str(error)
        assert Offer.objects.count() == 1

    def test_inactive_offers_of_the_same_pair_are_history_and_allowed(self):
        first = OfferFactory(active=False)
        OfferFactory(product=first.product, merchant=first.merchant, active=False)
        OfferFactory(product=first.product, merchant=first.merchant, active=True)
        assert Offer.objects.filter(product=first.product).count() == 3

    def test_merchant_sku_is_unique_per_merchant_only(self):
        first = OfferFactory(merchant_sku="ABC-1")
        OfferFactory(merchant_sku="ABC-1")  # another merchant may reuse it
        duplicate = OfferFactory.build(
            product=ProductFactory(), merchant=first.merchant, merchant_sku="ABC-1"
        )
        with pytest.raises(ValidationError) as raised:
            duplicate.full_clean()
        assert "already uses this SKU" in _messages(raised.value)
        _integrity_error(duplicate.save)

    def test_can_supply_follows_the_contract(self):
        assert OfferFactory.build(stock=None).can_supply(10**6)
        assert OfferFactory.build(stock=3).can_supply(3)
        assert not OfferFactory.build(stock=2).can_supply(3)


class TestProduct:
    def test_bad_check_digit_is_refused_with_a_clear_message(self):
        product = ProductFactory.build(gtin="4006381333932", category=CategoryFactory())
        with pytest.raises(ValidationError) as raised:
            product.full_clean()
        assert raised.value.message_dict["gtin"] == [
            "GTIN 4006381333932 has check digit 2, expected 1."
        ]

    def test_gtin_with_separators_is_stored_as_digits(self):
        product = ProductFactory.build(gtin="400-6381-333931", category=CategoryFactory())
        product.full_clean()
        assert product.gtin == "4006381333931"

    def test_gtin_is_unique(self):
        existing = ProductFactory()
        twin = ProductFactory.build(gtin=existing.gtin, slug="other", category=existing.category)
        with pytest.raises(ValidationError):
            twin.full_clean()
        _integrity_error(twin.save)


class TestMerchant:
    @pytest.mark.parametrize(
        ("fields", "field"),
        [
            ({"discount_min_units": 3}, "discount_basis_points"),
            ({"discount_basis_points": 500}, "discount_min_units"),
        ],
    )
    def test_discount_needs_both_fields(self, fields, field):
        merchant = MerchantFactory.build(**fields)
        with pytest.raises(ValidationError) as raised:
            merchant.full_clean()
        assert field in raised.value.message_dict
        _integrity_error(merchant.save)

    @pytest.mark.parametrize(
        "fields",
        [
            {"discount_min_units": 0, "discount_basis_points": 500},
            {"discount_min_units": 2, "discount_basis_points": 10_001},
            {"base_fee": -1},
            {"per_extra_unit": -1},
            {"free_over": -1},
        ],
    )
    def test_out_of_range_terms_are_refused(self, fields):
        merchant = MerchantFactory.build(**fields)
        with pytest.raises(ValidationError):
            merchant.full_clean()
        _integrity_error(merchant.save)
        assert Merchant.objects.count() == 0

    def test_full_discount_and_zero_fees_are_valid(self):
        merchant = MerchantFactory.build(
            base_fee=0, per_extra_unit=0, free_over=0, with_discount=True
        )
        merchant.discount_basis_points = 10_000
        merchant.full_clean()
        merchant.save()
        assert merchant.discount.basis_points == 10_000


class TestShippingZone:
    def test_prefix_is_normalized_and_unique_per_merchant(self):
        zone = ShippingZoneFactory(postal_prefix="SW1")
        twin = ShippingZone(merchant=zone.merchant, postal_prefix="sw 1", base_fee=0)
        with pytest.raises(ValidationError) as raised:
            twin.full_clean()
        assert twin.postal_prefix == "SW1"
        assert "already has a zone with this prefix" in _messages(raised.value)
        _integrity_error(twin.save)

    def test_negative_fee_is_refused(self):
        zone = ShippingZoneFactory.build(merchant=MerchantFactory(), base_fee=-5)
        with pytest.raises(ValidationError):
            zone.full_clean()
        _integrity_error(zone.save)


class TestCart:
    def test_a_cart_belongs_to_a_user_or_a_session_never_both_or_neither(self):
        user = UserFactory()
        for owner, session_key in [(None, ""), (user, "abc")]:
            cart = Cart(owner=owner, session_key=session_key)
            with pytest.raises(ValidationError):
                cart.full_clean()
            _integrity_error(cart.save)
        assert Cart.objects.count() == 0

    def test_one_cart_per_user_and_per_session(self):
        cart = CartFactory()
        _integrity_error(lambda: Cart.objects.create(owner=cart.owner))
        Cart.objects.create(session_key="s1")
        _integrity_error(lambda: Cart.objects.create(session_key="s1"))

    def test_destination_is_normalized_and_validated(self):
        cart = CartFactory.build(owner=UserFactory(), postal_code=" sw1a 1aa")
        cart.full_clean()
        assert cart.postal_code == "SW1A 1AA"
        cart.postal_code = "1"
        with pytest.raises(ValidationError) as raised:
            cart.full_clean()
        assert "postal_code" in raised.value.message_dict


class TestCartLine:
    def test_zero_quantity_is_refused(self):
        line = CartLineFactory.build(cart=CartFactory(), offer=OfferFactory(), quantity=0)
        line.product = line.offer.product
        with pytest.raises(ValidationError) as raised:
            line.full_clean()
        assert "quantity" in raised.value.message_dict
        _integrity_error(line.save)
        assert CartLine.objects.count() == 0

    def test_one_line_per_product_even_from_two_merchants(self):
        line = CartLineFactory()
        other_offer = OfferFactory(product=line.product)
        twin = CartLine(
            cart=line.cart,
            product=line.product,
            offer=other_offer,
            quantity=1,
            unit_price_snapshot=other_offer.unit_price,
        )
        with pytest.raises(ValidationError) as raised:
            twin.full_clean()
        assert "already in the cart" in _messages(raised.value)
        _integrity_error(twin.save)

    def test_line_product_must_be_its_offers_product(self):
        line = CartLineFactory.build(cart=CartFactory(), offer=OfferFactory())
        line.product = ProductFactory()
        with pytest.raises(ValidationError) as raised:
            line.full_clean()
        assert "offer" in raised.value.message_dict

    def test_offer_in_a_cart_cannot_be_deleted(self):
        line = CartLineFactory()
        with pytest.raises(ProtectedError):
            line.offer.delete()
        assert Offer.objects.filter(pk=line.offer_id).exists()
