"""The shipping address of an order, checked and normalised before anything is written."""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from storefront.checkout.countries import COUNTRY_NAMES
from storefront.errors import ValidationFailed
from storefront.validators import postal_code_normalize, validate_postal_code


@dataclass(frozen=True)
class ShippingAddress:
    email: str
    full_name: str
    address_line: str
    city: str
    postal_code: str
    country: str


_ADDRESS_LIMITS = {"full_name": 120, "address_line": 200, "city": 100}


def shipping_address_validate(
    *,
    email: object,
    full_name: object,
    address_line: object,
    city: object,
    postal_code: object,
    country: object,
) -> ShippingAddress:
    """A clean address, or ``ValidationFailed`` naming the first field at fault."""
    texts = {"full_name": full_name, "address_line": address_line, "city": city}
    for field, value in texts.items():
        if not isinstance(value, str) or not value.strip():
            raise ValidationFailed("This field is required.", code="required", field=field)
        if len(value.strip()) > _ADDRESS_LIMITS[field]:
            raise ValidationFailed(
                f"At most {_ADDRESS_LIMITS[field]} characters.", code="too_long", field=field
            )
    if not isinstance(email, str) or len(email) > 254:
        raise ValidationFailed("Enter a valid e-mail address.", code="email_invalid", field="email")
    try:
        validate_email(email.strip())
    except ValidationError:
        raise ValidationFailed(
            "Enter a valid e-mail address.", code="email_invalid", field="email"
        ) from None
    code = postal_code_normalize(postal_code if isinstance(postal_code, str) else "")
    try:
        validate_postal_code(code)
    except ValidationError as error:
        raise ValidationFailed(
            error.messages[0], code="postal_code_invalid", field="postal_code"
        ) from None
    country_code = country.strip().upper() if isinstance(country, str) else ""
    if country_code not in COUNTRY_NAMES:
        raise ValidationFailed(
            "Choose a country from the list.", code="country_invalid", field="country"
        )
    return ShippingAddress(
        email=email.strip(),
        full_name=str(full_name).strip(),
        address_line=str(address_line).strip(),
        city=str(city).strip(),
        postal_code=code,
        country=country_code,
    )
