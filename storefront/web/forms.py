"""Forms of the shopper pages. They check the shape of the input; the rules (stock, offer
state, postal code syntax) live in the services, whose errors views attach to these forms."""

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.forms.renderers import Jinja2

from storefront.bounds import DB_INT_MAX
from storefront.catalog.selectors import PRODUCT_ORDERINGS
from storefront.errors import DomainError
from storefront.models import MAX_LINE_QUANTITY
from storefront.search.prices import PRICE_RANGES

SORT_LABELS = {
    "relevance": "Best match",
    "name": "Name",
    # The listing ranks by the delivered price (storefront.search.delivered).
    "price": "Delivered price: low to high",
    "-price": "Delivered price: high to low",
    "newest": "Newest",
}
# Built from the selector's orderings so a new one cannot be offered without a label.
SORT_CHOICES = [(value, SORT_LABELS[value]) for value in PRODUCT_ORDERINGS]


def id_field(**kwargs) -> forms.IntegerField:
    """A row id: 1 to the database's largest integer (a larger one would overflow its query)."""
    return forms.IntegerField(
        required=False, min_value=1, max_value=DB_INT_MAX, widget=forms.HiddenInput, **kwargs
    )


class DomainErrorsMixin(forms.BaseForm):
    """Shows a service's ``DomainError`` on the field it names (else as a form error)."""

    def add_domain_error(self, error: DomainError) -> None:
        field = error.field if error.field in self.fields else None
        self.add_error(field, error.message)


class CatalogFilterForm(forms.Form):
    # Its widgets render on every uncached catalog page: Django's Jinja2 widget templates
    # give the same markup as its own, for a fraction of the template language's lookups.
    default_renderer = Jinja2()

    q = forms.CharField(
        label="Search",
        required=False,
        max_length=100,
        widget=forms.TextInput(
            attrs={
                "type": "search",
                "placeholder": "Kettle, headphones, coffee, a GTIN...",
                "autocomplete": "off",
            }
        ),
    )
    category = forms.ChoiceField(label="Category", required=False)
    sort = forms.ChoiceField(label="Sort by", required=False, choices=SORT_CHOICES)
    # The facets (links and checkboxes in the catalog's side panel).
    merchant = id_field()
    price = forms.ChoiceField(
        required=False, choices=[("", "Any price")] + [(r.key, r.label) for r in PRICE_RANGES]
    )
    in_stock = forms.BooleanField(label="In stock", required=False)
    free = forms.BooleanField(label="Ships free", required=False)

    def __init__(self, *args, categories=(), **kwargs):
        super().__init__(*args, **kwargs)
        category_field = self.fields["category"]
        assert isinstance(category_field, forms.ChoiceField)
        category_field.choices = [("", "All categories")] + [
            (category.slug, f"{category.name} ({category.product_count})")
            for category in categories
        ]


def quantity_field(**kwargs) -> forms.IntegerField:
    return forms.IntegerField(
        min_value=1,
        max_value=MAX_LINE_QUANTITY,
        error_messages={
            "min_value": "Quantity must be at least 1; use Remove to take a product out.",
            "max_value": f"Quantity must be at most {MAX_LINE_QUANTITY}.",
            "invalid": "Enter a whole number.",
            "required": "Enter a quantity.",
        },
        widget=forms.NumberInput(attrs={"inputmode": "numeric", "class": "qty-input"}),
        **kwargs,
    )


class AddToCartForm(DomainErrorsMixin, forms.Form):
    """Adds an offer, or a product's cheapest offer that can supply the quantity."""

    offer = id_field()
    product = id_field()
    quantity = quantity_field(initial=1, label="Quantity")
    next = forms.CharField(required=False, widget=forms.HiddenInput)

    def clean(self):
        super().clean()
        cleaned = self.cleaned_data
        if not cleaned.get("offer") and not cleaned.get("product"):
            raise forms.ValidationError("Choose an offer or a product to add.")
        return cleaned


class LineQuantityForm(DomainErrorsMixin, forms.Form):
    quantity = quantity_field(label="Quantity")


class DestinationForm(DomainErrorsMixin, forms.Form):
    postal_code = forms.CharField(
        label="Deliver to (postal code)",
        required=False,
        max_length=10,
        error_messages={"max_length": "A postal code has at most 10 characters."},
        widget=forms.TextInput(
            attrs={"autocomplete": "postal-code", "placeholder": "e.g. 10115", "size": 10}
        ),
    )
    next = forms.CharField(required=False, widget=forms.HiddenInput)


class SignUpForm(UserCreationForm):
    email = forms.EmailField(required=False, help_text="Optional.", label="Email")

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")
