"""A signed-in shopper's saved shipping addresses: the one used last fills the next
checkout, the others are a click away."""

from dataclasses import asdict

from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from storefront.checkout.address import ShippingAddress
from storefront.models import Address

# Enough for home, work and a few gifts; older ones make way.
ADDRESSES_KEPT = 5


def address_list(*, user) -> QuerySet[Address]:
    """The user's addresses, the last used first (none for a guest)."""
    if user is None or not user.is_authenticated:
        return Address.objects.none()
    return Address.objects.filter(owner=user)[:ADDRESSES_KEPT]


def address_get(*, user, address_id: object) -> Address | None:
    """One of the user's addresses, or ``None`` (not theirs, not a number, a guest)."""
    if not isinstance(address_id, str) or not address_id.isdigit():
        return None
    if user is None or not user.is_authenticated:
        return None
    return Address.objects.filter(owner=user, pk=int(address_id)).first()


@transaction.atomic
def address_remember(*, user, address: ShippingAddress) -> Address | None:
    """Saves ``address`` for the user as the last used (the same place again is updated,
    not duplicated) and forgets all but the ``ADDRESSES_KEPT`` most recent. A guest's
    address is never kept."""
    if user is None or not user.is_authenticated:
        return None
    fields = asdict(address)
    place = {key: fields.pop(key) for key in ("full_name", "address_line", "city")}
    place.update(postal_code=fields.pop("postal_code"), country=fields.pop("country"))
    saved, _ = Address.objects.update_or_create(
        owner=user, **place, defaults={**fields, "last_used_at": timezone.now()}
    )
    stale = Address.objects.filter(owner=user).values_list("pk", flat=True)[ADDRESSES_KEPT:]
    Address.objects.filter(pk__in=list(stale)).delete()
    return saved


def address_as_initial(address: Address) -> dict:
    return {
        "email": address.email,
        "full_name": address.full_name,
        "address_line": address.address_line,
        "city": address.city,
        "postal_code": address.postal_code,
        "country": address.country,
    }
