import pytest
from hypothesis import given
from hypothesis import strategies as st

from storefront.catalog.shipping import (
    ShippingRule,
    postal_prefix_candidates,
    shipping_rule_resolve,
)
from storefront.catalog.shipping_selectors import (
    merchant_terms_for_destination,
    shipping_rule_for_destination,
    shipping_rules_for_destination,
)
from tests.factories import MerchantFactory, ShippingZoneFactory

DEFAULT = ShippingRule(base_fee=499, per_extra_unit=100, free_over=5000)


def zone(prefix: str, fee: int) -> ShippingRule:
    return ShippingRule(base_fee=fee, per_extra_unit=0, free_over=None, zone_prefix=prefix)


class TestResolve:
    def test_longest_matching_prefix_wins_whatever_the_order(self):
        zones = [zone("1", 100), zone("101", 300), zone("10", 200), zone("2", 900)]
        rule = shipping_rule_resolve(default=DEFAULT, zones=zones, postal_code="10115")
        assert rule == zone("101", 300)
        rule = shipping_rule_resolve(default=DEFAULT, zones=reversed(zones), postal_code="10999")
        assert rule == zone("10", 200)

    def test_no_match_falls_back_to_the_merchant_defaults(self):
        rule = shipping_rule_resolve(default=DEFAULT, zones=[zone("2", 1)], postal_code="10115")
        assert rule is DEFAULT
        assert rule.zone_prefix is None

    def test_empty_prefix_zone_matches_everywhere_even_without_destination(self):
        everywhere = zone("", 150)
        zones = [everywhere, zone("9", 700)]
        assert (
            shipping_rule_resolve(default=DEFAULT, zones=zones, postal_code="10115") == everywhere
        )
        assert shipping_rule_resolve(default=DEFAULT, zones=zones, postal_code=None) == everywhere
        assert shipping_rule_resolve(default=DEFAULT, zones=zones, postal_code="90210") == zone(
            "9", 700
        )

    def test_case_spaces_and_dashes_do_not_matter(self):
        zones = [zone("SW1A", 100), zone("SW", 200)]
        assert shipping_rule_resolve(default=DEFAULT, zones=zones, postal_code="sw1a 1aa") == zone(
            "SW1A", 100
        )

    def test_candidates_are_every_prefix_longest_first(self):
        assert postal_prefix_candidates("sw1-a") == ["SW1A", "SW1", "SW", "S", ""]
        assert postal_prefix_candidates(None) == [""]

    @given(
        prefixes=st.lists(st.text(alphabet="0123", max_size=4), unique=True, max_size=8),
        code=st.text(alphabet="0123", min_size=3, max_size=6),
    )
    def test_matches_brute_force(self, prefixes, code):
        zones = [zone(prefix, index) for index, prefix in enumerate(prefixes)]
        matching = [z for z in zones if code.startswith(z.zone_prefix)]
        expected = max(matching, key=lambda z: len(z.zone_prefix)) if matching else DEFAULT
        assert shipping_rule_resolve(default=DEFAULT, zones=zones, postal_code=code) == expected


@pytest.mark.django_db
class TestSelectors:
    def test_bulk_rules_use_two_queries_whatever_the_number_of_merchants(
        self, django_assert_num_queries
    ):
        merchants = MerchantFactory.create_batch(12, base_fee=400, free_over=None)
        for merchant in merchants[:6]:
            ShippingZoneFactory(merchant=merchant, postal_prefix="1", base_fee=100)
            ShippingZoneFactory(merchant=merchant, postal_prefix="101", base_fee=50)
            ShippingZoneFactory(merchant=merchant, postal_prefix="2", base_fee=900)
        with django_assert_num_queries(2):
            rules = shipping_rules_for_destination(
                merchant_ids=[m.pk for m in merchants], postal_code="10115"
            )
        assert set(rules) == {m.pk for m in merchants}
        for merchant in merchants[:6]:
            assert rules[merchant.pk] == ShippingRule(50, 50, None, "101")
        for merchant in merchants[6:]:
            assert rules[merchant.pk] == ShippingRule(400, 100, None, None)

    def test_terms_carry_discounts_and_leave_out_unknown_ids(self):
        merchant = MerchantFactory(with_discount=True)
        terms = merchant_terms_for_destination(
            merchant_ids=[merchant.pk, 999_999], postal_code=None
        )
        assert list(terms) == [merchant.pk]
        assert terms[merchant.pk].discount.min_units == 3
        assert terms[merchant.pk].discount.basis_points == 500

    def test_no_merchants_means_no_query(self, django_assert_num_queries):
        with django_assert_num_queries(0):
            assert shipping_rules_for_destination(merchant_ids=[], postal_code="10115") == {}

    def test_single_merchant_rule(self):
        merchant = MerchantFactory()
        ShippingZoneFactory(merchant=merchant, postal_prefix="", base_fee=1)
        ShippingZoneFactory(merchant=merchant, postal_prefix="18", base_fee=999)
        assert shipping_rule_for_destination(merchant=merchant, postal_code="18439").base_fee == 999
        assert shipping_rule_for_destination(merchant=merchant, postal_code="10115").base_fee == 1
