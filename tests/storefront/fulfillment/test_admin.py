"""The fulfillment admin: catalog admins manage every merchant's warehouses, rates, tiers and
stock through the services; merchant staff only their own merchant's (404 for another's
objects, and no row for another merchant by posting its id)."""

import pytest
from django.urls import reverse

from storefront.fulfillment.services import parcel_rate_create, warehouse_create
from storefront.fulfillment.stock import warehouse_stock_set
from storefront.models import (
    MerchantStaff,
    Offer,
    ParcelRate,
    Product,
    Warehouse,
    WarehouseStock,
    WeightTier,
)
from tests.factories import MerchantFactory, OfferFactory, ProductFactory, UserFactory

pytestmark = pytest.mark.django_db


def url(model, view: str, *args) -> str:
    return reverse(f"admin:storefront_{model._meta.model_name}_{view}", args=args)


def inline_management(prefix: str, *, total: int = 0, initial: int = 0) -> dict:
    return {
        f"{prefix}-TOTAL_FORMS": str(total),
        f"{prefix}-INITIAL_FORMS": str(initial),
        f"{prefix}-MIN_NUM_FORMS": "0",
        f"{prefix}-MAX_NUM_FORMS": "1000",
    }


@pytest.fixture
def shop():
    """Two merchants with a warehouse, a rate with a tier and a stocked offer each."""
    rows = {}
    for name in ("a", "b"):
        merchant = MerchantFactory(name=f"Merchant {name.upper()}", slug=f"merchant-{name}")
        offer = OfferFactory(merchant=merchant, merchant_sku=f"{name}-1", stock=5)
        warehouse = warehouse_create(merchant=merchant, name="Hamburg", adopt=False)
        rate = parcel_rate_create(warehouse=warehouse, base_fee=499, tiers=[(2000, 0)])
        stock = warehouse_stock_set(offer=offer, warehouse=warehouse, stock=4)
        rows[name] = {
            "merchant": merchant,
            "offer": offer,
            "warehouse": warehouse,
            "rate": rate,
            "stock": stock,
        }
    return rows


@pytest.fixture
def admin_client(client):
    client.force_login(UserFactory(username="root", is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def staff_a(client, shop):
    user = UserFactory(username="staff-a", is_staff=True)
    MerchantStaff.objects.create(user=user, merchant=shop["a"]["merchant"])
    client.force_login(user)
    return client


class TestMerchantStaffScoping:
    def test_lists_show_only_their_merchants_rows(self, staff_a, shop):
        for model, key in (
            (Warehouse, "warehouse"),
            (ParcelRate, "rate"),
            (WarehouseStock, "stock"),
            (Offer, "offer"),
        ):
            response = staff_a.get(url(model, "changelist"))
            assert response.status_code == 200, model
            shown = {row.pk for row in response.context["cl"].result_list}
            assert shown == {shop["a"][key].pk}, model

    def test_another_merchants_objects_are_not_found(self, staff_a, shop):
        for model, key in (
            (Warehouse, "warehouse"),
            (ParcelRate, "rate"),
            (WarehouseStock, "stock"),
            (Offer, "offer"),
        ):
            other = shop["b"][key]
            assert staff_a.get(url(model, "change", other.pk)).status_code == 404, model
            assert staff_a.post(url(model, "change", other.pk), {}).status_code == 404, model
            assert staff_a.get(url(model, "change", shop["a"][key].pk)).status_code == 200
        for model, key in ((Warehouse, "warehouse"), (ParcelRate, "rate")):
            other = shop["b"][key]
            response = staff_a.post(url(model, "delete", other.pk), {"post": "yes"})
            assert response.status_code == 404
            assert type(other).objects.filter(pk=other.pk).exists()
        # No deleting offers (they deactivate them).
        assert staff_a.get(url(Offer, "delete", shop["a"]["offer"].pk)).status_code == 403

    def test_they_cannot_create_rows_for_another_merchant_by_posting_its_ids(self, staff_a, shop):
        b = shop["b"]
        response = staff_a.post(
            url(Warehouse, "add"),
            {"merchant": b["merchant"].pk, "name": "Sneaky", "active": "on"}
            | inline_management("parcel_rates"),
        )
        assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
        response = staff_a.post(
            url(ParcelRate, "add"),
            {"warehouse": b["warehouse"].pk, "postal_prefix": "9", "base_fee": "1.00"}
            | {"per_extra_unit": "0", "per_kg_over": "0"}
            | inline_management("tiers"),
        )
        assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
        for offer, warehouse in (
            (b["offer"], shop["a"]["warehouse"]),
            (shop["a"]["offer"], b["warehouse"]),
        ):
            response = staff_a.post(
                url(WarehouseStock, "add"),
                {"offer": offer.pk, "warehouse": warehouse.pk, "stock": "9"},
            )
            assert response.status_code == 200
        product = ProductFactory()
        response = staff_a.post(
            url(Offer, "add"),
            {
                "product": product.gtin,
                "merchant": b["merchant"].pk,
                "merchant_sku": "x",
                "unit_price": "1.00",
                "stock": "",
                "active": "on",
            },
        )
        assert response.status_code == 200
        assert not Warehouse.objects.filter(name="Sneaky").exists()
        assert not ParcelRate.objects.filter(postal_prefix="9").exists()
        assert WarehouseStock.objects.count() == 2
        assert not Offer.objects.filter(product=product).exists()

    def test_they_manage_their_own_warehouses_rates_and_stock(self, staff_a, shop):
        a = shop["a"]
        response = staff_a.post(
            url(Warehouse, "add"),
            {"merchant": a["merchant"].pk, "name": "Munich", "postal_code": "80331"}
            | {"city": "München", "active": "on"}
            | inline_management("parcel_rates", total=1)
            | {
                "parcel_rates-0-postal_prefix": "8",
                "parcel_rates-0-base_fee": "3.99",
                "parcel_rates-0-per_extra_unit": "0",
                "parcel_rates-0-per_kg_over": "0.50",
            },
        )
        assert response.status_code == 302, response.content.decode()[:2000]
        munich = Warehouse.objects.get(merchant=a["merchant"], name="Munich")
        rate = ParcelRate.objects.get(warehouse=munich)
        assert (rate.postal_prefix, rate.base_fee, rate.per_kg_over) == ("8", 399, 50)
        response = staff_a.post(
            url(WarehouseStock, "add"),
            {"offer": a["offer"].pk, "warehouse": munich.pk, "stock": "6"},
        )
        assert response.status_code == 302
        assert Offer.objects.get(pk=a["offer"].pk).stock == 10  # 4 in Hamburg, 6 in Munich

    def test_offer_autocomplete_offers_only_their_offers(self, staff_a, shop):
        response = staff_a.get(
            reverse("admin:autocomplete"),
            {
                "app_label": "storefront",
                "model_name": "warehousestock",
                "field_name": "offer",
                "term": "",
            },
        )
        assert response.status_code == 200
        assert {row["id"] for row in response.json()["results"]} == {str(shop["a"]["offer"].pk)}

    def test_they_add_offers_by_gtin_without_browsing_the_catalog(self, staff_a, shop):
        product = ProductFactory()
        assert staff_a.get(url(Product, "changelist")).status_code == 403
        form = {"merchant_sku": "a-2", "unit_price": "2.50", "stock": "", "active": "on"}
        form["merchant"] = shop["a"]["merchant"].pk
        response = staff_a.post(url(Offer, "add"), form | {"product": "4000000000000"})
        assert "No product with this GTIN" in response.content.decode()
        spaced = f"{product.gtin[:4]} {product.gtin[4:]}"
        response = staff_a.post(url(Offer, "add"), form | {"product": spaced})
        assert response.status_code == 302, response.content.decode()[:3000]
        offer = Offer.objects.get(merchant_sku="a-2")
        assert (offer.product, offer.merchant, offer.unit_price) == (
            product,
            shop["a"]["merchant"],
            250,
        )
        # Their merchant ships from a warehouse: a new offer sells from none until stocked.
        assert offer.stock == 0

    def test_their_pages_render_and_name_nothing_of_another_merchant(self, staff_a, shop):
        index = staff_a.get(reverse("admin:index")).content.decode()
        for label in ("Warehouses", "Parcel rates", "Warehouse stock", "Offers"):
            assert label in index
        other_sku = shop["b"]["offer"].merchant_sku
        for model in (Warehouse, ParcelRate, WarehouseStock, Offer):
            for view in ("changelist", "add"):
                page = staff_a.get(url(model, view))
                assert page.status_code == 200, (model, view)
                assert "Merchant B" not in page.content.decode(), (model, view)
                assert other_sku not in page.content.decode()

    def test_staff_without_a_merchant_see_nothing(self, client, shop):
        client.force_login(UserFactory(username="helper", is_staff=True))
        assert client.get(url(Warehouse, "changelist")).status_code == 403
        assert client.get(url(Warehouse, "change", shop["a"]["warehouse"].pk)).status_code == 403


class TestCatalogAdmin:
    def test_a_rates_tiers_are_saved_through_the_service_in_order(self, admin_client, shop):
        rate = shop["a"]["rate"]
        tier = rate.tiers.get()
        response = admin_client.post(
            url(ParcelRate, "change", rate.pk),
            {"postal_prefix": "", "base_fee": "4.99", "per_extra_unit": "1.00"}
            | {"per_kg_over": "0.50"}
            | inline_management("tiers", total=3, initial=1)
            | {"tiers-0-id": tier.pk, "tiers-0-rate": rate.pk, "tiers-0-up_to_g": "2000"}
            | {"tiers-0-fee": "0", "tiers-1-up_to_g": "31500", "tiers-1-fee": "7.00"}
            | {"tiers-2-up_to_g": "10000", "tiers-2-fee": "3.00"},
        )
        assert response.status_code == 302, response.content.decode()[:3000]
        assert list(WeightTier.objects.filter(rate=rate).values_list("up_to_g", "fee")) == [
            (2000, 0),
            (10000, 300),
            (31500, 700),
        ]
        rate.refresh_from_db()
        assert (rate.per_extra_unit, rate.per_kg_over) == (100, 50)

    def test_two_tiers_of_one_weight_are_a_form_error(self, admin_client, shop):
        rate = shop["a"]["rate"]
        tier = rate.tiers.get()
        response = admin_client.post(
            url(ParcelRate, "change", rate.pk),
            {"postal_prefix": "", "base_fee": "4.99", "per_extra_unit": "0", "per_kg_over": "0"}
            | inline_management("tiers", total=2, initial=1)
            | {"tiers-0-id": tier.pk, "tiers-0-rate": rate.pk, "tiers-0-up_to_g": "2000"}
            | {"tiers-0-fee": "0", "tiers-1-up_to_g": "2000", "tiers-1-fee": "1.00"},
        )
        assert response.status_code == 200
        assert rate.tiers.count() == 1

    def test_a_warehouse_merchants_offer_stock_is_per_warehouse(self, admin_client, shop):
        offer = shop["a"]["offer"]
        response = admin_client.post(
            url(Offer, "change", offer.pk),
            {
                "product": offer.product_id,
                "merchant": offer.merchant_id,
                "merchant_sku": offer.merchant_sku,
                "unit_price": "12.00",
                "stock": "99",
                "active": "on",
            },
        )
        assert response.status_code == 200
        assert "set the stock per warehouse" in response.content.decode()
        response = admin_client.post(
            url(Offer, "change", offer.pk),
            {
                "product": offer.product_id,
                "merchant": offer.merchant_id,
                "merchant_sku": offer.merchant_sku,
                "unit_price": "12.00",
                "stock": "4",
                "active": "on",
            },
        )
        assert response.status_code == 302
        offer.refresh_from_db()
        assert (offer.unit_price, offer.stock) == (1200, 4)

    def test_a_product_weight_is_edited_in_the_product_admin(
        self, admin_client, shop, django_capture_on_commit_callbacks
    ):
        from storefront.catalog.offer_changes import offers_changed

        product = shop["a"]["offer"].product
        page = admin_client.get(url(Product, "change", product.pk)).content.decode()
        assert 'name="weight_g"' in page
        sent = []
        offers_changed.connect(
            lambda sender, product_ids, **kw: sent.append(set(product_ids)),
            weak=False,
            dispatch_uid="test_weight",
        )
        try:
            with django_capture_on_commit_callbacks(execute=True):
                response = admin_client.post(
                    url(Product, "change", product.pk),
                    {
                        "gtin": product.gtin,
                        "name": product.name,
                        "slug": product.slug,
                        "category": product.category_id,
                        "weight_g": "7200",
                    }
                    | inline_management("offers", total=1, initial=1)
                    | {
                        "offers-0-id": shop["a"]["offer"].pk,
                        "offers-0-product": product.pk,
                        "offers-0-merchant": shop["a"]["merchant"].pk,
                        "offers-0-merchant_sku": "a-1",
                        "offers-0-unit_price": "19.99",
                        "offers-0-stock": "4",
                        "offers-0-active": "on",
                    },
                )
        finally:
            offers_changed.disconnect(dispatch_uid="test_weight")
        assert response.status_code == 302, response.content.decode()[:3000]
        product.refresh_from_db()
        assert product.weight_g == 7200
        assert any(product.pk in ids for ids in sent)

    def test_pages_render(self, admin_client, shop):
        for model, key in (
            (Warehouse, "warehouse"),
            (ParcelRate, "rate"),
            (WarehouseStock, "stock"),
        ):
            assert admin_client.get(url(model, "changelist")).status_code == 200
            assert admin_client.get(url(model, "change", shop["a"][key].pk)).status_code == 200
            assert admin_client.get(url(model, "add")).status_code == 200
