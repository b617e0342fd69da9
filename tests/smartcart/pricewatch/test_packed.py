"""The packed chunk reader against the CartProblem path: the same carts, totals and notice
fields, to the cent, on random markets (zones, discounts, free shipping, stock limits, ties,
zero prices, unbuyable lines, prices that moved since the lines were added)."""

import json
import random

import numpy as np
import pytest

from gpu_engine.batch import pack_problems
from smartcart.pricewatch.checks import Counts, checked_packed, checked_problems
from smartcart.pricewatch.offer_book import OfferBook
from smartcart.pricewatch.packed import carts_packed_read
from smartcart.pricewatch.selectors import carts_problems_build
from smartcart.pricewatch.services import _notice_wanted
from smartcart.pricewatch.writes import JsonText
from storefront.models import Cart, CartLine, Offer
from tests.factories import (
    CartFactory,
    CartLineFactory,
    MerchantFactory,
    OfferFactory,
    ProductFactory,
    ShippingZoneFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

_TIMINGS = ("solve_ms", "elapsed_ms")


def _random_market(rng: random.Random, n_carts: int) -> list[int]:
    merchants = [
        MerchantFactory(
            base_fee=rng.choice([0, 300, 499]),
            per_extra_unit=rng.choice([0, 100]),
            free_over=rng.choice([None, 2000, 5000]),
            with_discount=rng.random() < 0.5,
        )
        for _ in range(5)
    ]
    for merchant in merchants[:3]:
        ShippingZoneFactory(merchant=merchant, postal_prefix=rng.choice(["", "1", "10"]))
    products = [ProductFactory() for _ in range(6)]
    offers = []
    for product in products:
        for merchant in rng.sample(merchants, rng.randint(1, 5)):
            offers.append(
                OfferFactory(
                    product=product,
                    merchant=merchant,
                    unit_price=rng.choice([0, 500, 500, 750, 1000, 1999]),
                    stock=rng.choice([None, None, 0, 1, 3]),
                )
            )
    for _ in range(n_carts):
        cart = CartFactory(owner=UserFactory(), postal_code=rng.choice(["", "1011", "2000"]))
        for product in rng.sample(products, rng.randint(1, 5)):
            offer = rng.choice([o for o in offers if o.product_id == product.pk])
            CartLineFactory(
                cart=cart,
                offer=offer,
                quantity=rng.randint(1, 3),
                unit_price_snapshot=max(0, offer.unit_price + rng.choice([0, 0, -100, 250])),
            )
    for offer in rng.sample(offers, 2):
        Offer.objects.filter(pk=offer.pk).update(active=False)
    return list(Cart.objects.order_by("id").values_list("id", flat=True))


def _seen(carts) -> dict:
    out = {}
    for cart in carts:
        answers = []
        for improvable in (True, False):
            fields = cart.answer(improvable)
            answers.append({k: v for k, v in fields.items() if k not in _TIMINGS})
        out[cart.cart_id] = (
            cart.cart_version,
            cart.owner_id,
            cart.current_total,
            cart.added_total,
            cart.suggested_total,
            answers,
        )
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_the_packed_path_checks_carts_as_the_problem_path_does(seed):
    cart_ids = _random_market(random.Random(seed), 30)
    ids = [*cart_ids, 10**9]  # and a cart that is gone
    packed, problems = Counts(), Counts()
    by_packed = _seen(checked_packed(cart_ids=ids, device="cpu", counts=packed).checked)
    by_problem = _seen(checked_problems(cart_ids=ids, device="cpu", counts=problems))
    assert by_packed == by_problem
    assert packed.skipped == problems.skipped
    assert len(by_packed) + packed.skipped == len(cart_ids) + 1
    assert len(by_packed) > 0
    # Every buyable cart went through the packed batch, none back to the problem path.
    chunk = carts_packed_read(cart_ids=cart_ids)
    assert chunk.n_carts == len(by_packed) and not chunk.fallback


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_the_packed_chunk_has_the_bytes_pack_problems_gives_its_problems(seed):
    """Both builders go through ``pack_carts``: the chunk's batch equals, array by array and
    type by type, the batch of the same carts' problems, but for the pricing rows, which the
    chunk shares between carts (so the rows are compared as each merchant sees them)."""
    cart_ids = _random_market(random.Random(seed), 30)
    chunk = carts_packed_read(cart_ids=cart_ids)
    builds = {c.build.cart_id: c.build for c in carts_problems_build(cart_ids=cart_ids).carts}
    want = pack_problems([builds[cart_id].problem for cart_id in chunk.cart_ids])
    got = chunk.batch
    assert chunk.n_carts > 0
    for name in got.__dataclass_fields__:
        a, b = getattr(got, name), getattr(want, name)
        if name in ("base", "extra", "free_over", "dmin", "dbp"):
            a, b = a[got.merch_row], b[want.merch_row]
        if name != "merch_row":
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), name
    assert got.merch_row.dtype == want.merch_row.dtype == np.int32


def test_a_line_on_an_offer_the_runs_book_has_not_read_goes_to_the_single_cart_path():
    """The run's book reads a product's offers once; a line moved since onto an offer it does
    not hold (created after) is checked by the single-cart path, as it stands."""
    cart_ids = _random_market(random.Random(0), 30)
    book = OfferBook()
    first = carts_packed_read(cart_ids=cart_ids, book=book)
    cart_id = int(first.cart_ids[0])
    line = CartLine.objects.filter(cart_id=cart_id).order_by("id").first()
    assert line is not None
    newer = OfferFactory(product=line.product, merchant=MerchantFactory(), unit_price=1)
    CartLine.objects.filter(pk=line.pk).update(offer=newer)
    again = carts_packed_read(cart_ids=[cart_id], book=book)
    assert (again.n_carts, again.fallback) == (0, [cart_id])
    checks = checked_packed(cart_ids=[cart_id], device="cpu", counts=Counts(), book=book)
    by_packed = _seen(checks.checked)
    by_problem = _seen(checked_problems(cart_ids=[cart_id], device="cpu", counts=Counts()))
    assert by_packed == by_problem and len(by_packed) == 1


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_notices_decided_on_the_arrays_are_the_notices_decided_cart_by_cart(seed):
    """Carts that hold no notice are decided and built together (``Fresh``): the same carts,
    counts and stored fields as deciding each cart of the problem path alone."""
    cart_ids = _random_market(random.Random(seed), 30)
    packed, problems = Counts(), Counts()
    checks = checked_packed(cart_ids=cart_ids, device="cpu", counts=packed, noticed=set())
    assert not checks.checked
    together = {
        cart_id: _stored(fields) for batch in checks.fresh for cart_id, fields in batch.notices()
    }
    alone = {}
    for cart in checked_problems(cart_ids=cart_ids, device="cpu", counts=problems):
        decided = _notice_wanted(cart, problems)
        if decided is not None:
            improvable, increase = decided
            alone[cart.cart_id] = _stored({**cart.answer(improvable), "price_increase": increase})
    assert together == alone and together
    assert (packed.improvable, packed.price_up) == (problems.improvable, problems.price_up)


def _stored(fields: dict) -> dict:
    """The fields as the notice row holds them (JSON text decoded), timings aside."""
    return {
        k: json.loads(v) if isinstance(v, JsonText) else v
        for k, v in fields.items()
        if k not in _TIMINGS
    }
