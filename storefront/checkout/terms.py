"""What the checkout promises about each package and about the money, in one place so the
address step, the review and the confirmation say the same."""

from dataclasses import dataclass

from django.conf import settings

RETURN_DAYS = 14


@dataclass(frozen=True)
class PackageTerms:
    seller: str
    returns: str
    contact: str


def checkout_package_terms(*, merchant_name: str) -> PackageTerms:
    support = settings.STOREFRONT_SUPPORT_EMAIL
    return PackageTerms(
        seller=f"Sold and shipped by {merchant_name}",
        returns=(
            f"Returns: send it back within {RETURN_DAYS} days of delivery for a refund "
            "of its price, no reason needed."
        ),
        contact=f"Questions: {support}, with your order number; we answer for {merchant_name}.",
    )


PAYMENT_TIMING = (
    "Nothing is taken when you place the order. You pay on the next page, once, for the "
    "total shown here; a package a merchant cancels is refunded to the same payment method."
)
