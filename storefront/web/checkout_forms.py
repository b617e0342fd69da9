"""Forms of checkout and orders: the shape of the input; the rules live in
``storefront.checkout`` services, whose errors the views attach here."""

from django import forms

from storefront.web.forms import DomainErrorsMixin


class CheckoutAddressForm(DomainErrorsMixin, forms.Form):
    email = forms.EmailField(label="E-mail", max_length=254, help_text="For the confirmation.")
    full_name = forms.CharField(label="Full name", max_length=120)
    address_line = forms.CharField(label="Street address", max_length=200)
    city = forms.CharField(label="City", max_length=100)
    postal_code = forms.CharField(
        label="Postal code",
        max_length=10,
        help_text="Shipping is priced for this code.",
        widget=forms.TextInput(attrs={"autocomplete": "postal-code"}),
    )
    country = forms.CharField(
        label="Country code",
        min_length=2,
        max_length=2,
        initial="DE",
        help_text="Two letters, e.g. DE.",
        widget=forms.TextInput(attrs={"autocomplete": "country"}),
    )


class PlaceOrderForm(DomainErrorsMixin, forms.Form):
    review_token = forms.CharField(widget=forms.HiddenInput, max_length=4000)
    idempotency_key = forms.CharField(widget=forms.HiddenInput, max_length=100)


class OrderLookupForm(DomainErrorsMixin, forms.Form):
    number = forms.CharField(label="Order number", max_length=20)
    email = forms.EmailField(label="E-mail used for the order", max_length=254)
