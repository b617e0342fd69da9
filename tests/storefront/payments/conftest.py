import pytest
from payments import RedirectNeeded

from storefront.models import Payment
from storefront.orders.services import merchant_order_transition
from tests.factories import UserFactory
from tests.storefront.orders.conftest import two_merchant_cart  # noqa: F401


def pay_with_dummy_form(payment: Payment, status: str = "confirmed") -> None:
    """What the shopper's browser does on the dummy provider's form."""
    data = {"status": status, "fraud_status": "accept", "gateway_response": "3ds-disabled"}
    with pytest.raises(RedirectNeeded):
        payment.get_form(data=data)


def merchant_cancel(package, *, reason: str = "Out of stock") -> None:
    from storefront.models import MerchantStaff

    staff = UserFactory(is_staff=True)
    MerchantStaff.objects.create(user=staff, merchant=package.merchant)
    merchant_order_transition(package=package, action="cancel", user=staff, reason=reason)
