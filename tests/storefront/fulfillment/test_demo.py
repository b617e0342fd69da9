"""The demo's fulfillment: two merchants ship from warehouses with parcel rates by weight,
every product weighs something, offer stock is the total of the warehouse stock, and the split
cart's best answer depends on the warehouses (priced per parcel, not per merchant)."""

import io
import itertools

import numpy as np
import pytest
from django.core.management import call_command

from gpu_engine import CartProblem, price_assignment
from storefront.catalog.shipping_selectors import merchant_terms_for_destination
from storefront.demo.catalog import DEMO_DESTINATION, catalog_checksum
from storefront.demo.fulfillment import demo_split_cart
from storefront.fulfillment.selectors import (
    merchant_nodes_for_destination,
    offer_stock_by_warehouse,
)
from storefront.fulfillment.stock import offer_stock_totals
from storefront.models import MerchantStaff, Offer, Product, Warehouse, WarehouseStock

pytestmark = pytest.mark.django_db

SEEDS = [
    ["--seed", "7", "--merchants", "8", "--products", "30"],  # the e2e catalog
    ["--seed", "11", "--merchants", "12", "--products", "40"],
    ["--seed", "42", "--merchants", "40", "--products", "300"],
]


def seed(args) -> None:
    call_command("seed_demo", *args, stdout=io.StringIO(), stderr=io.StringIO())


def _discount(merchant):
    discount = merchant.discount
    if discount is None:
        return None
    return {"min_units": discount.min_units, "basis_points": discount.basis_points}


def cart_problem(products, *, per_warehouse: bool) -> dict:
    """The cart (one unit of each product) as a pricing-contract problem to the demo
    destination: merchants with warehouses by their nodes (``per_warehouse``) or, as version
    1 would, by one parcel at their own shipping rule and no weights."""
    offers = list(
        Offer.objects.filter(product__in=products, active=True, merchant__active=True)
        .select_related("merchant")
        .order_by("pk")
    )
    merchants = {offer.merchant_id: offer.merchant for offer in offers}
    terms = merchant_terms_for_destination(merchant_ids=merchants, postal_code=DEMO_DESTINATION)
    nodes = merchant_nodes_for_destination(merchant_ids=merchants, postal_code=DEMO_DESTINATION)
    nodes = nodes if per_warehouse else {}
    stock = offer_stock_by_warehouse(offer_ids=[offer.pk for offer in offers])
    entries, offer_entries = [], []
    for merchant_id, merchant in merchants.items():
        entry = {"id": str(merchant_id), "discount": _discount(merchant)}
        if merchant_id in nodes:
            if not nodes[merchant_id]:
                continue
            entry["free_over"] = merchant.free_over
            entry["nodes"] = [
                {
                    "id": str(node.warehouse_id),
                    "shipping": {
                        "base_fee": node.base_fee,
                        "per_extra_unit": node.per_extra_unit,
                        "weight_tiers": [{"up_to_g": u, "fee": f} for u, f in node.tiers],
                        "per_kg_over": node.per_kg_over,
                    },
                }
                for node in nodes[merchant_id]
            ]
        else:
            entry["shipping"] = terms[merchant_id].shipping.as_spec()
        entries.append(entry)
    for offer in offers:
        if offer.merchant_id in nodes:
            for node in nodes[offer.merchant_id]:
                if node.warehouse_id in stock.get(offer.pk, {}):
                    offer_entries.append(
                        {
                            "item": str(offer.product_id),
                            "merchant": str(offer.merchant_id),
                            "node": str(node.warehouse_id),
                            "price": offer.unit_price,
                            "stock": stock[offer.pk][node.warehouse_id],
                        }
                    )
        elif any(entry["id"] == str(offer.merchant_id) for entry in entries):
            offer_entries.append(
                {
                    "item": str(offer.product_id),
                    "merchant": str(offer.merchant_id),
                    "price": offer.unit_price,
                    "stock": offer.stock,
                }
            )
    items = [
        {"id": str(p.pk), "quantity": 1, "weight_g": p.weight_g if per_warehouse else 0}
        for p in products
    ]
    return {"items": items, "merchants": entries, "offers": offer_entries}


def best(problem: CartProblem) -> tuple[int, dict[str, str]]:
    """Exhaustive: every eligible column per line, priced by the engine's one routine."""
    columns = [np.flatnonzero(problem.price[i] >= 0) for i in range(problem.n_items)]
    found = None
    for choice in itertools.product(*columns):
        breakdown = price_assignment(problem, np.asarray(choice, dtype=np.int64))
        total = sum(cost.cost for cost in breakdown)
        if found is None or total < found[0]:
            owners = {line: cost.merchant for cost in breakdown for line in cost.lines}
            found = (total, owners)
    assert found is not None
    return found


@pytest.mark.slow
@pytest.mark.parametrize("args", SEEDS, ids=["e2e", "small", "default-merchants"])
def test_the_split_cart_is_decided_by_the_warehouses(args):
    seed(args)
    cart = demo_split_cart()
    assert cart is not None
    assert cart.heavy.weight_g >= 5000 and 1000 <= cart.light.weight_g <= 2500
    split_at = set(
        WarehouseStock.objects.filter(
            offer__merchant=cart.split, offer__product__in=[cart.heavy, cart.light]
        ).values_list("warehouse__name", flat=True)
    )
    assert split_at == {"Munich", "Hamburg"}
    joined_at = set(
        WarehouseStock.objects.filter(
            offer__merchant=cart.joined, offer__product__in=[cart.heavy, cart.light]
        ).values_list("warehouse__name", flat=True)
    )
    assert joined_at == {"Berlin"}
    products = [cart.heavy, cart.light]
    aware_total, aware = best(CartProblem.from_dict(cart_problem(products, per_warehouse=True)))
    blind_total, blind = best(CartProblem.from_dict(cart_problem(products, per_warehouse=False)))
    # Priced per merchant, the merchant with the split stock takes both; priced per parcel,
    # joining both in the other merchant's one parcel is cheaper.
    assert set(blind.values()) == {str(cart.split.pk)}
    assert set(aware.values()) == {str(cart.joined.pk)}
    assert aware_total != blind_total


@pytest.mark.slow
def test_warehouses_rates_weights_and_stock_add_up():
    seed(SEEDS[1])
    by_merchant = {}
    for warehouse in Warehouse.objects.select_related("merchant"):
        by_merchant.setdefault(warehouse.merchant.slug, set()).add(warehouse.name)
    assert sorted(map(sorted, by_merchant.values())) == [
        ["Berlin", "Frankfurt"],
        ["Hamburg", "Leipzig", "Munich"],
    ]
    for warehouse in Warehouse.objects.all():
        everywhere = warehouse.parcel_rates.get(postal_prefix="")
        tiers = list(everywhere.tiers.values_list("up_to_g", flat=True))
        assert tiers == sorted(tiers) and tiers[-1] == 31500 and everywhere.per_kg_over > 0
        warehouse.full_clean()
    # Every product weighs something; monitors outweigh kettles, cables are light.
    assert not Product.objects.filter(weight_g=0).exists()
    kinds = {}
    for product in Product.objects.all():
        for noun in ("Monitor", "Kettle", "Charger"):
            if noun in product.name:
                kinds.setdefault(noun, []).append(product.weight_g)
    if "Monitor" in kinds:
        assert min(kinds["Monitor"]) >= 6000
    if "Charger" in kinds:
        assert max(kinds["Charger"]) <= 200
    # The offer's stock is the total of its warehouse stock.
    offers = Offer.objects.filter(merchant__warehouses__isnull=False).distinct()
    totals = offer_stock_totals(offer_ids=offers.values_list("pk", flat=True))
    assert totals and totals == dict(offers.values_list("pk", "stock"))
    # The demo's merchant login keeps a merchant without warehouses.
    staff = MerchantStaff.objects.get(user__username="merchant")
    assert not Warehouse.objects.filter(merchant=staff.merchant_id).exists()


@pytest.mark.slow
def test_one_seed_one_catalog_with_its_warehouses():
    seed(SEEDS[0])
    first = catalog_checksum()
    seed(["--reset", *SEEDS[0]])
    assert catalog_checksum() == first
    assert WarehouseStock.objects.exists()
