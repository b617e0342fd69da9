import pytest
from hypothesis import given
from hypothesis import strategies as st

from storefront.errors import NotFound
from storefront.models import Refund
from storefront.statements.periods import period_month
from storefront.statements.selectors import commission_of, merchant_statement, statement_merchants
from tests.factories import UserFactory
from tests.storefront.statements.conftest import placed, staff_of

pytestmark = pytest.mark.django_db

NOVEMBER = period_month(year=2026, month=11)
DECEMBER = period_month(year=2026, month=12)


def statement(package, period=NOVEMBER):
    user = staff_of(package.merchant)
    return merchant_statement(user=user, merchant_id=package.merchant_id, period=period)


def test_a_paid_package_is_a_sale_in_the_month_of_its_capture(two_merchant_cart, clock, paid):
    clock.set(2026, 10, 31, 23, 0)  # placed in October, paid in November
    order, first, second = placed(two_merchant_cart, bps=(1250, 800))
    clock.set(2026, 11, 1, 0, 0)
    paid(order)
    a = statement(first)
    assert [(line.kind, line.order_number, line.amount) for line in a.lines] == [
        ("sale", order.number, first.cost)
    ]
    assert a.sales == first.cost
    assert a.commission == commission_of(amount=first.cost, bps=1250)
    assert a.payout_due == first.cost - a.commission
    assert statement(second).commission == commission_of(amount=second.cost, bps=800)
    october = period_month(year=2026, month=10)
    assert statement(first, october).lines == ()


def test_a_refund_counts_in_the_month_the_provider_made_it_and_gives_the_commission_back(
    two_merchant_cart, clock, paid, cancelled
):
    order, first, second = placed(two_merchant_cart)
    clock.set(2026, 11, 30, 23, 59)
    paid(order)
    clock.set(2026, 12, 1, 0, 1)
    cancelled(first)
    november, december = statement(first), statement(first, DECEMBER)
    assert (november.sales, november.refunds) == (first.cost, 0)
    assert (december.sales, december.refunds) == (0, first.cost)
    assert december.commission_returned == november.commission_on_sales
    assert december.payout_due == -november.payout_due
    assert [line.kind for line in december.lines] == ["refund"]
    # The other merchant's package was not touched.
    assert statement(second, DECEMBER).lines == ()
    assert statement(second).payout_due == second.cost - commission_of(amount=second.cost, bps=1000)


def test_a_sale_refunded_in_the_same_month_nets_to_nothing(
    two_merchant_cart, clock, paid, cancelled
):
    order, first, _ = placed(two_merchant_cart, bps=(333, 0))
    paid(order)
    cancelled(first)
    result = statement(first)
    assert [line.kind for line in result.lines] == ["sale", "refund"]
    assert (result.sales, result.refunds, result.commission, result.payout_due) == (
        first.cost,
        first.cost,
        0,
        0,
    )


def test_a_package_cancelled_before_payment_is_no_sale(two_merchant_cart, clock, paid, cancelled):
    order, first, second = placed(two_merchant_cart)
    cancelled(first)
    clock.set(2026, 11, 11, 9, 0)
    paid(order)
    assert statement(first).lines == ()
    assert statement(second).sales == second.cost


def test_an_unpaid_order_is_on_no_statement(two_merchant_cart, clock):
    _, first, second = placed(two_merchant_cart)
    assert statement(first).lines == () and statement(second).lines == ()


def test_a_refund_waiting_on_the_provider_is_listed_apart_not_counted(
    two_merchant_cart, clock, paid, django_capture_on_commit_callbacks
):
    from tests.storefront.payments.conftest import merchant_cancel

    order, first, _ = placed(two_merchant_cart)
    paid(order)
    with django_capture_on_commit_callbacks(execute=False):  # the refund task never runs
        merchant_cancel(first)
    result = statement(first)
    assert result.refunds == 0
    assert [(r.order_number, r.amount, r.status) for r in result.open_refunds] == [
        (order.number, first.cost, Refund.Status.PENDING)
    ]


def test_the_packages_rate_counts_not_the_merchants_rate_today(two_merchant_cart, clock, paid):
    order, first, _ = placed(two_merchant_cart, bps=(500, 1000))
    first.merchant.commission_bps = 2000
    first.merchant.save(update_fields=["commission_bps"])
    paid(order)
    assert statement(first).commission == commission_of(amount=first.cost, bps=500)


def test_merchant_staff_read_their_own_merchant_only(two_merchant_cart, clock):
    _, first, second = placed(two_merchant_cart)
    staff = staff_of(first.merchant)
    assert list(statement_merchants(user=staff)) == [first.merchant]
    with pytest.raises(NotFound):
        merchant_statement(user=staff, merchant_id=second.merchant_id, period=NOVEMBER)
    # Even a superuser who works for a merchant sees only that merchant.
    boss = staff_of(second.merchant, is_superuser=True)
    with pytest.raises(NotFound):
        merchant_statement(user=boss, merchant_id=first.merchant_id, period=NOVEMBER)


def test_catalog_admins_read_every_merchant_and_shoppers_none(two_merchant_cart, clock):
    _, first, second = placed(two_merchant_cart)
    admin = UserFactory(is_staff=True, is_superuser=True)
    assert {m.pk for m in statement_merchants(user=admin)} >= {
        first.merchant_id,
        second.merchant_id,
    }
    merchant_statement(user=admin, merchant_id=second.merchant_id, period=NOVEMBER)
    shopper = UserFactory()
    assert not statement_merchants(user=shopper).exists()
    with pytest.raises(NotFound):
        merchant_statement(user=shopper, merchant_id=first.merchant_id, period=NOVEMBER)


def test_a_statement_costs_four_queries(
    two_merchant_cart, clock, paid, cancelled, django_assert_num_queries
):
    order, first, _ = placed(two_merchant_cart)
    paid(order)
    cancelled(first)
    staff = staff_of(first.merchant)
    staff = type(staff).objects.select_related("merchant_staff").get(pk=staff.pk)
    with django_assert_num_queries(4):
        merchant_statement(user=staff, merchant_id=first.merchant_id, period=NOVEMBER)


@given(amount=st.integers(0, 10**12), bps=st.integers(0, 10_000))
def test_commission_rounds_half_up_to_the_cent_and_never_exceeds_the_amount(amount, bps):
    commission = commission_of(amount=amount, bps=bps)
    assert 0 <= commission <= amount
    assert abs(commission * 10_000 - amount * bps) <= 5_000
    assert commission_of(amount=-amount, bps=bps) == -commission


def test_commission_half_a_cent_rounds_up():
    assert commission_of(amount=5, bps=1000) == 1  # 0.5 cent
    assert commission_of(amount=4, bps=1000) == 0
    assert commission_of(amount=1999, bps=1250) == 250  # 249.875
