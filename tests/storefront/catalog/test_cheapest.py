"""The stored cheapest offer per product: parity with the live query, freshness after every
kind of write, and the recompute's own guarantees (idempotent, chunked, no churn)."""

import random

import pytest
from django.core.management import call_command
from django.urls import reverse

from storefront.catalog import cheapest, selectors, services
from storefront.catalog.cheapest import catalog_cheapest_recompute
from storefront.models import CheapestOfferRefresh, Merchant, Offer, Product, ProductCheapest
from tests.factories import MerchantFactory, OfferFactory, ProductFactory, UserFactory

pytestmark = pytest.mark.django_db

ANNOTATIONS = (
    "best_price",
    "best_offer_id",
    "best_merchant_id",
    "best_merchant_name",
    "offer_count",
)


def listed(**filters) -> dict[int, tuple]:
    return {
        product.pk: tuple(getattr(product, name) for name in ANNOTATIONS)
        for product in selectors.product_list(**filters)
    }


def reference() -> dict[int, tuple]:
    """The definition, by brute force: the cheapest offer that is active, in stock and sold
    by an active merchant; ties to the lowest merchant id, then offer id."""
    best: dict[int, tuple] = {product.pk: (None,) * 5 for product in Product.objects.all()}
    buyable: dict[int, list[Offer]] = {}
    for offer in Offer.objects.select_related("merchant"):
        if offer.active and offer.merchant.active and (offer.stock is None or offer.stock > 0):
            buyable.setdefault(offer.product_id, []).append(offer)
    for product_id, offers in buyable.items():
        top = min(offers, key=lambda o: (o.unit_price, o.merchant_id, o.pk))
        best[product_id] = (
            top.unit_price,
            top.pk,
            top.merchant_id,
            top.merchant.name,
            len(offers),
        )
    return best


def random_market(seed: int) -> None:
    rng = random.Random(seed)
    merchants = [MerchantFactory(active=rng.random() > 0.2) for _ in range(5)]
    # An id past int32 and prices past int32 cents: the kernel takes int32, the store must not
    # lose order or ties on the way.
    merchants.append(MerchantFactory(pk=2**31 + seed, active=True))
    for _ in range(30):
        product = ProductFactory()
        for merchant in rng.sample(merchants, rng.randint(0, len(merchants))):
            OfferFactory(
                product=product,
                merchant=merchant,
                unit_price=rng.choice([100, 100, 250, 999, 2**31 + 7, 10**10]),
                stock=rng.choice([None, None, 0, 1, 7]),
                active=rng.random() > 0.25,
            )
            if rng.random() < 0.2:  # history: an inactive older SKU of the same merchant
                OfferFactory(product=product, merchant=merchant, unit_price=1, active=False)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stored_values_equal_the_live_query_and_the_definition(seed, settings):
    settings.STOREFRONT_CHEAPEST_CHUNK = 7  # several chunks, ragged offer counts
    random_market(seed)
    live = listed()
    live_by_price = [p.pk for p in selectors.product_list(ordering="price")]
    assert CheapestOfferRefresh.objects.exists()  # nothing stored yet: all read live

    result = catalog_cheapest_recompute()

    assert result.products == result.written == Product.objects.count()
    assert not CheapestOfferRefresh.objects.exists()
    assert ProductCheapest.objects.count() == Product.objects.count()
    assert listed() == live == reference()
    assert [p.pk for p in selectors.product_list(ordering="price")] == live_by_price
    assert listed(available_only=True) == {k: v for k, v in live.items() if v[0] is not None}


def test_product_list_reads_the_stored_row_only_while_it_is_fresh():
    offer = OfferFactory(unit_price=700)
    catalog_cheapest_recompute()
    # Tamper with the stored row: only a read of the stored value can see this.
    ProductCheapest.objects.filter(product=offer.product).update(price=1)
    assert listed()[offer.product_id][0] == 1
    CheapestOfferRefresh.objects.create(product=offer.product)
    assert listed()[offer.product_id][0] == 700
    assert selectors.product_get(product_id=offer.product_id).best_price == 700


def test_a_page_is_still_one_query_with_stored_values(django_assert_num_queries):
    for _ in range(30):
        OfferFactory(product=ProductFactory())
    catalog_cheapest_recompute()
    with django_assert_num_queries(1):
        page = list(selectors.product_list(ordering="price")[:24])
    assert all(product.best_merchant_name for product in page)


# --- every write keeps it honest ------------------------------------------------------------


@pytest.fixture
def computed():
    """Two merchants selling one product; stored values computed and fresh."""
    cheap = MerchantFactory(name="Cheap")
    dear = MerchantFactory(name="Dear")
    product = ProductFactory()
    low = OfferFactory(product=product, merchant=cheap, unit_price=500)
    high = OfferFactory(product=product, merchant=dear, unit_price=900)
    catalog_cheapest_recompute()
    assert not CheapestOfferRefresh.objects.exists()
    return product, low, high


def pending() -> set[int]:
    return set(CheapestOfferRefresh.objects.values_list("product_id", flat=True))


def test_a_price_change_through_the_service_is_seen_at_once_and_then_stored(computed):
    product, low, high = computed
    services.offer_update(offer=low, unit_price=1000)
    assert pending() == {product.pk}
    assert listed()[product.pk][:2] == (900, high.pk)
    catalog_cheapest_recompute()
    assert not pending()
    stored = ProductCheapest.objects.get(product=product)
    assert (stored.offer_id, stored.price, stored.offer_count) == (high.pk, 900, 2)


def test_a_new_offer_through_the_service(computed):
    product, _, _ = computed
    offer = services.offer_create(
        product=product, merchant=MerchantFactory(), merchant_sku="NEW", unit_price=100
    )
    assert listed()[product.pk][:2] == (100, offer.pk)
    catalog_cheapest_recompute()
    assert listed()[product.pk] == (100, offer.pk, offer.merchant_id, offer.merchant.name, 3)


def test_selling_out_and_deactivating_offers(computed):
    product, low, high = computed
    services.offer_update(offer=low, stock=0)
    services.offer_update(offer=high, active=False)
    assert listed()[product.pk] == (None,) * 5
    catalog_cheapest_recompute()
    assert listed()[product.pk] == (None,) * 5
    stored = ProductCheapest.objects.get(product=product)
    assert (stored.offer_id, stored.price, stored.offer_count) == (None, None, 0)


def test_switching_a_merchant_off_and_on(computed):
    product, low, high = computed
    merchant = low.merchant
    merchant.name = "Renamed"
    merchant.save()
    assert not pending()  # a name is read live, never stored
    assert listed()[product.pk][3] == "Renamed"
    merchant.active = False
    merchant.save()
    assert pending() == {product.pk}
    assert listed()[product.pk][:2] == (900, high.pk)
    catalog_cheapest_recompute()
    Merchant.objects.get(pk=merchant.pk).save()  # saved again unchanged: nothing to do
    assert not pending()
    merchant.active = True
    merchant.save(update_fields=["active"])
    assert listed()[product.pk][:2] == (500, low.pk)


def test_deleting_offers_one_by_one_in_bulk_or_with_their_merchant(computed):
    product, low, high = computed
    low.delete()
    assert pending() == {product.pk}
    assert listed()[product.pk][:2] == (900, high.pk)
    catalog_cheapest_recompute()
    Offer.objects.filter(pk=high.pk).delete()
    assert listed()[product.pk] == (None,) * 5
    catalog_cheapest_recompute()
    extra = OfferFactory(product=product, unit_price=300)
    catalog_cheapest_recompute()
    extra.merchant.delete()
    assert pending() == {product.pk}
    assert listed()[product.pk] == (None,) * 5


def test_deleting_a_product_with_a_pending_refresh(computed):
    product, low, _ = computed
    services.offer_update(offer=low, unit_price=1)
    product.delete()
    result = catalog_cheapest_recompute()
    assert result.written == 0
    assert not CheapestOfferRefresh.objects.exists()


def test_moving_an_offer_to_another_product_refreshes_both(computed):
    product, low, high = computed
    other = ProductFactory()
    catalog_cheapest_recompute()
    low.product = other
    low.save()
    assert pending() == {product.pk, other.pk}
    catalog_cheapest_recompute()
    assert listed()[product.pk][:2] == (900, high.pk)
    assert listed()[other.pk][:2] == (500, low.pk)


def test_admin_bulk_actions_mark_what_queryset_update_changes(client, computed):
    product, low, high = computed
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    response = client.post(
        reverse("admin:storefront_offer_changelist"),
        {"action": "make_inactive", "_selected_action": [low.pk]},
    )
    assert response.status_code == 302
    assert pending() == {product.pk}
    assert listed()[product.pk][:2] == (900, high.pk)
    catalog_cheapest_recompute()
    client.post(
        reverse("admin:storefront_merchant_changelist"),
        {"action": "make_inactive", "_selected_action": [high.merchant_id]},
    )
    assert listed()[product.pk] == (None,) * 5
    client.post(
        reverse("admin:storefront_product_changelist"),
        {"action": "recompute_cheapest", "_selected_action": [product.pk]},
    )
    assert pending() == {product.pk}


# --- the recompute itself -------------------------------------------------------------------


def test_recomputing_again_writes_nothing():
    for _ in range(5):
        OfferFactory()
    first = catalog_cheapest_recompute(all_products=True)
    stamps = dict(ProductCheapest.objects.values_list("product_id", "updated_at"))
    second = catalog_cheapest_recompute(all_products=True)
    assert (first.written, second.written) == (5, 0)
    assert dict(ProductCheapest.objects.values_list("product_id", "updated_at")) == stamps


def test_recomputing_a_given_set_of_products(settings):
    settings.STOREFRONT_CHEAPEST_CHUNK = 2
    offers = [OfferFactory() for _ in range(5)]
    chosen = [offers[0].product_id, offers[3].product_id, 10**9]
    result = catalog_cheapest_recompute(product_ids=chosen)
    assert result.products == 3 and result.written == 2
    assert set(ProductCheapest.objects.values_list("product_id", flat=True)) == set(chosen[:2])
    assert pending() == {offer.product_id for offer in offers} - set(chosen)


def test_a_change_committed_during_a_recompute_is_not_lost(monkeypatch):
    """The chunk deletes only the refresh rows it read: a writer that commits after the
    offers were read leaves its own row, so the product stays live and is recomputed."""
    offer = OfferFactory(unit_price=300)
    real = cheapest._cheapest
    stored_while_stale = []

    def writer_sneaks_in(product_ids, offers):
        if not stored_while_stale:
            services.offer_update(offer=offer, unit_price=200)
            stored_while_stale.append(int(offers[0, 3]))
        return real(product_ids, offers)

    monkeypatch.setattr(cheapest, "_cheapest", writer_sneaks_in)
    catalog_cheapest_recompute(product_ids=[offer.product_id])
    assert stored_while_stale == [300]
    assert ProductCheapest.objects.get(product=offer.product).price == 300
    assert pending() == {offer.product_id}  # so the stored 300 is not trusted
    assert listed()[offer.product_id][0] == 200
    catalog_cheapest_recompute()
    assert not pending()
    assert ProductCheapest.objects.get(product=offer.product).price == 200


def test_the_recompute_command(capsys):
    OfferFactory()
    call_command("recompute_cheapest")
    assert "1 products recomputed (1 changed" in capsys.readouterr().out
    call_command("recompute_cheapest", "--all")
    assert "(0 changed" in capsys.readouterr().out
