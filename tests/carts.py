"""Carts with real choices: each product sold by several merchants with different shipping,
so the cheapest way to buy the cart is not simply the lines as added. Shared by the
storefront and smartcart tests (storefront's tests never import smartcart's)."""

from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    UserFactory,
)


def cart_with_choices(*, owner=None, lines: int = 3, quantity: int = 1):
    """A cart whose lines sit at an expensive merchant ``dear`` while ``bundle`` sells every
    product a little cheaper with free shipping over 50.00: moving everything is best."""
    dear = MerchantFactory(name="Dear Shop", base_fee=499, per_extra_unit=100)
    bundle = MerchantFactory(name="Bundle Shop", base_fee=599, per_extra_unit=0, free_over=5000)
    cheap = MerchantFactory(name="Cheap Shop", base_fee=899, per_extra_unit=300)
    cart = CartFactory(owner=owner or UserFactory())
    for index in range(lines):
        product = ProductFactory(name=f"Widget {index}")
        offer = OfferFactory(product=product, merchant=dear, unit_price=2500)
        OfferFactory(product=product, merchant=bundle, unit_price=2300)
        OfferFactory(product=product, merchant=cheap, unit_price=2200, stock=50)
        CartLineFactory(cart=cart, offer=offer, quantity=quantity)
    return cart


def cart_from_problem(problem: dict, *, owner=None):
    """The shop's version of an engine problem (version 1 form): one merchant per merchant, one
    product per line, its offers, and a cart whose lines sit at each line's first eligible
    offer. The shop's cart problem is then the same problem, so its optimum is the engine's."""
    merchants = {}
    for spec in problem["merchants"]:
        shipping, discount = spec["shipping"], spec.get("discount") or {}
        merchants[spec["id"]] = MerchantFactory(
            name=spec["id"],
            base_fee=shipping["base_fee"],
            per_extra_unit=shipping["per_extra_unit"],
            free_over=shipping.get("free_over"),
            discount_min_units=discount.get("min_units"),
            discount_basis_points=discount.get("basis_points"),
        )
    quantity = {item["id"]: item["quantity"] for item in problem["items"]}
    products = {item: ProductFactory(name=item) for item in quantity}
    first = {}
    for spec in problem["offers"]:
        offer = OfferFactory(
            product=products[spec["item"]],
            merchant=merchants[spec["merchant"]],
            unit_price=spec["price"],
            stock=spec.get("stock"),
        )
        eligible = offer.stock is None or offer.stock >= quantity[spec["item"]]
        if eligible:
            first.setdefault(spec["item"], offer)
    cart = CartFactory(owner=owner or UserFactory())
    for item, offer in first.items():
        CartLineFactory(cart=cart, offer=offer, quantity=quantity[item])
    return cart
