"""Model validation as the domain's ``ValidationFailed``, shared by the fulfillment writers."""

from django.core.exceptions import ValidationError

from storefront.errors import validation_failed_from


def full_clean_or_fail(instance) -> None:
    """Model validation (fields, ``clean()``, constraints) as one domain error."""
    try:
        instance.full_clean()
    except ValidationError as error:
        raise validation_failed_from(error) from error
