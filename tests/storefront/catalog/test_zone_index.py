import pytest
from django.db import transaction
from django.test import override_settings
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_engine.catalog.radix.tree import radix_tree_build
from storefront.catalog.shipping import ShippingRule, shipping_rule_resolve
from storefront.catalog.shipping_selectors import (
    shipping_rules_for_destination,
    shipping_rules_for_destinations,
)
from storefront.catalog.zone_index import (
    zone_index_build,
    zone_index_current,
    zone_index_invalidate,
    zone_index_version,
)
from storefront.models import Merchant, ShippingZone
from tests.factories import MerchantFactory, ShippingZoneFactory

pytestmark = pytest.mark.django_db


def _rules(pairs):
    zone_index_invalidate()
    return shipping_rules_for_destinations(pairs=pairs)


def _expected(merchant_id, code):
    return shipping_rules_for_destination(merchant_ids=[merchant_id], postal_code=code).get(
        merchant_id
    )


class _Rollback(Exception):
    pass


_prefixes = st.text(alphabet="12AB", max_size=3)
_codes = st.one_of(
    st.none(),
    st.text(alphabet="12ab AB-.", max_size=6),
)
_merchant = st.tuples(
    st.booleans(),
    st.integers(0, 900),
    st.lists(st.tuples(_prefixes, st.integers(0, 900)), max_size=5, unique_by=lambda z: z[0]),
)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(merchants=st.lists(_merchant, min_size=1, max_size=4), codes=st.lists(_codes, max_size=6))
def test_parity_with_the_per_destination_selector(merchants, codes):
    try:
        with transaction.atomic():
            created = []
            for active, fee, zones in merchants:
                merchant = MerchantFactory(active=active, base_fee=fee)
                for prefix, zone_fee in zones:
                    ShippingZoneFactory(merchant=merchant, postal_prefix=prefix, base_fee=zone_fee)
                created.append(merchant)
            ids = [merchant.pk for merchant in created] + [max(m.pk for m in created) + 1]
            pairs = [(merchant_id, code) for merchant_id in ids for code in [*codes, "1A2"]]
            got = _rules(pairs)
            assert got == [_expected(merchant_id, code) for merchant_id, code in pairs]
            by_id = {merchant.pk: merchant for merchant in created}
            for (merchant_id, code), rule in zip(pairs, got, strict=True):
                if merchant_id not in by_id:
                    assert rule is None
                    continue
                merchant = by_id[merchant_id]
                zones = [zone.shipping_rule() for zone in merchant.zones.all()]
                assert rule == shipping_rule_resolve(
                    default=merchant.default_shipping_rule(), zones=zones, postal_code=code
                )
            raise _Rollback
    except _Rollback:
        pass


def test_longest_prefix_wins_and_empty_prefix_matches_everywhere():
    merchant = MerchantFactory(base_fee=500)
    ShippingZoneFactory(merchant=merchant, postal_prefix="", base_fee=1)
    ShippingZoneFactory(merchant=merchant, postal_prefix="SW", base_fee=2)
    ShippingZoneFactory(merchant=merchant, postal_prefix="SW1A", base_fee=3)
    codes = ["sw1a 1aa", "SW9 9ZZ", "E1 6AN", "", None, "sw-1"]
    rules = _rules([(merchant.pk, code) for code in codes])
    assert [rule.base_fee for rule in rules] == [3, 2, 1, 1, 1, 2]
    assert [rule.zone_prefix for rule in rules] == ["SW1A", "SW", "", "", "", "SW"]


def test_no_matching_zone_falls_back_to_defaults_and_unknown_merchant_is_none():
    merchant = MerchantFactory(base_fee=499, per_extra_unit=100, free_over=5000)
    bare = MerchantFactory(base_fee=7, active=False)
    ShippingZoneFactory(merchant=merchant, postal_prefix="75", base_fee=1)
    rules = _rules([(merchant.pk, "10115"), (bare.pk, "75001"), (bare.pk + 1000, "75001")])
    assert rules == [
        ShippingRule(base_fee=499, per_extra_unit=100, free_over=5000, zone_prefix=None),
        ShippingRule(base_fee=7, per_extra_unit=100, free_over=None, zone_prefix=None),
        None,
    ]
    assert shipping_rules_for_destinations(pairs=[]) == []


def test_merchants_that_do_not_fit_one_tree_are_sharded():
    # Ten alphanumeric characters take 60 bits: four namespace bits, 16 merchants a tree.
    merchants = Merchant.objects.bulk_create(
        Merchant(name=f"M{i}", slug=f"m-{i}", base_fee=1000 + i) for i in range(20)
    )
    ShippingZone.objects.bulk_create(
        ShippingZone(merchant=m, postal_prefix=f"AB{i:08d}", base_fee=i)
        for i, m in enumerate(merchants)
    )
    index = zone_index_build()
    assert len(index.shards) == 2
    pairs = [(m.pk, f"AB{i:08d}") for i, m in enumerate(merchants)]
    pairs += [(m.pk, f"AB{(i + 1) % 20:08d}") for i, m in enumerate(merchants)]
    got = index.resolve(pairs=pairs)
    assert got == [_expected(merchant_id, code) for merchant_id, code in pairs]
    assert [rule.base_fee for rule in got[:20]] == list(range(20))


def test_zone_change_replaces_the_stamp_and_the_index(django_capture_on_commit_callbacks):
    merchant = MerchantFactory(base_fee=500)
    zone_index_invalidate()
    before = zone_index_current()
    assert before.version == zone_index_version()
    with django_capture_on_commit_callbacks(execute=True):
        zone = ShippingZoneFactory(merchant=merchant, postal_prefix="12", base_fee=9)
    assert zone_index_version() != before.version
    assert shipping_rules_for_destinations(pairs=[(merchant.pk, "123")])[0].base_fee == 9
    with django_capture_on_commit_callbacks(execute=True):
        zone.delete()
    assert shipping_rules_for_destinations(pairs=[(merchant.pk, "123")])[0].base_fee == 500
    with django_capture_on_commit_callbacks(execute=True):
        Merchant.objects.filter(pk=merchant.pk).get().save()
    assert zone_index_version() != before.version


def test_no_stamp_change_before_commit(django_capture_on_commit_callbacks):
    merchant = MerchantFactory()
    version = zone_index_version()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        ShippingZoneFactory(merchant=merchant, postal_prefix="1")
    assert zone_index_version() == version
    assert callbacks


def test_query_counts(django_assert_num_queries):
    merchants = MerchantFactory.create_batch(3)
    for merchant in merchants:
        ShippingZoneFactory(merchant=merchant, postal_prefix="4")
    pairs = [(merchant.pk, code) for merchant in merchants for code in ("40", "50", None)]
    zone_index_invalidate()
    with django_assert_num_queries(2):
        first = shipping_rules_for_destinations(pairs=pairs)
    with django_assert_num_queries(0):
        again = shipping_rules_for_destinations(pairs=pairs * 100)
    assert again == first * 100


def test_the_index_builds_on_the_configured_device(monkeypatch):
    """Web processes and cpu workers must hold no CUDA context: the index builds where
    STOREFRONT_ZONE_INDEX_DEVICE says ("cpu" by default), not wherever a GPU happens to be."""
    import storefront.catalog.zone_index as zone_index

    devices = []

    def build(keys, *, device, **kwargs):
        devices.append(device)
        return radix_tree_build(keys, device="cpu", **kwargs)

    monkeypatch.setattr(zone_index, "radix_tree_build", build)
    ShippingZoneFactory(merchant=MerchantFactory(), postal_prefix="10")
    zone_index_invalidate()
    zone_index_current()
    with override_settings(STOREFRONT_ZONE_INDEX_DEVICE="auto"):
        zone_index_build()
    assert devices == ["cpu", "auto"]
