"""Forms of checkout and orders: the shape of the input; the rules live in
``storefront.checkout`` services, whose errors the views attach here."""

from django import forms

from storefront.checkout.countries import country_choices
from storefront.web.forms import DomainErrorsMixin


class CountryField(forms.ChoiceField):
    """The ISO code from the list; a client's lower-case code ("de") is the same country."""

    def to_python(self, value):
        return super().to_python(value).strip().upper()


def _text(label: str, max_length: int, autocomplete: str, **kwargs) -> forms.CharField:
    return forms.CharField(
        label=label,
        max_length=max_length,
        widget=forms.TextInput(attrs={"autocomplete": autocomplete}),
        **kwargs,
    )


class CheckoutAddressForm(DomainErrorsMixin, forms.Form):
    # Field names follow the order model; the autocomplete tokens let browsers fill them.
    email = forms.EmailField(
        label="E-mail",
        max_length=254,
        help_text="For the confirmation and the shipping notice.",
        widget=forms.EmailInput(attrs={"autocomplete": "email"}),
    )
    full_name = _text("Full name", 120, "name")
    address_line = _text("Street address", 200, "street-address")
    postal_code = _text(
        "Postal code", 10, "postal-code", help_text="Shipping is priced for this code."
    )
    city = _text("City", 100, "address-level2")
    country = CountryField(
        label="Country",
        choices=country_choices(),
        initial="DE",
        widget=forms.Select(attrs={"autocomplete": "country"}),
    )


class PlaceOrderForm(DomainErrorsMixin, forms.Form):
    review_token = forms.CharField(widget=forms.HiddenInput, max_length=4000)
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=100)


class OrderLookupForm(DomainErrorsMixin, forms.Form):
    number = forms.CharField(label="Order number", max_length=20)
    email = forms.EmailField(label="E-mail used for the order", max_length=254)
