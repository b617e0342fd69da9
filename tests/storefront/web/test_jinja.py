# ruff: noqa: E501  (the reference template keeps its long lines as they were)
"""The Jinja2 offer rows (storefront/web/jinja.py) render byte for byte what the Django
template loop they replaced rendered: same escaping (an apostrophe is ``&#x27;``), the same
CSRF input and shopper-slot markers, every branch of the row."""

import pytest
from django.template import Context, Template

from storefront.caching.fragments import CSRF_MARKER
from storefront.templatetags.web_tags import jinja_include

# The loop as it was in templates/web/product.html, kept as the reference.
DJANGO_LOOP = """{% load fragments %}{% for row in offer_views %}
      <li class="offer{% if row.cheapest %} offer--best{% endif %}{% if row.sold_out %} offer--sold-out{% endif %}" data-merchant="{{ row.merchant_name }}" data-offer-id="{{ row.offer_id }}">
        <div class="offer__merchant">
          <strong>{{ row.merchant_name }}</strong>
          <span class="offer__badges">
            {% if row.cheapest %}<span class="pill pill--success" title="Lowest delivered cost">Cheapest</span>{% endif %}
            {% shopper_slot "in_cart" row.offer_id %}
          </span>
        </div>
        <div class="offer__price"><span class="price">{{ row.price }}</span></div>
        <div class="offer__stock">
          {% if row.sold_out %}<span class="stock stock--out">Sold out</span>
          {% elif row.low_stock %}<span class="stock stock--low">Only {{ row.stock }} left</span>
          {% elif row.stock is None %}<span class="stock stock--ok">In stock</span>
          {% else %}<span class="stock stock--ok">{{ row.stock }} in stock</span>{% endif %}
        </div>
        <div class="offer__terms">
          {% if row.delivered %}<span class="offer__delivered" data-testid="delivered"><strong>{{ row.delivered }}</strong> {{ row.delivered_label }}</span>
          <span>{{ row.delivered_note }}</span>{% endif %}
          <span>{{ row.shipping }}</span>
          {% if row.discount %}<span class="offer__discount">{{ row.discount }}</span>{% endif %}
          {% if row.zone_rate %}<span class="muted small">Zone rate for {{ postal_code }}</span>{% endif %}
        </div>
        <form method="post" action="{{ cart_add_url }}" class="offer__add" data-once>
          {% csrf_token %}
          <input type="hidden" name="offer" value="{{ row.offer_id }}">
          <label for="qty-{{ row.offer_id }}" class="visually-hidden">Quantity from {{ row.merchant_name }}</label>
          <input id="qty-{{ row.offer_id }}" class="qty-input" type="number" name="quantity" min="1" max="{{ row.max_quantity }}" inputmode="numeric" required
                 value="{% if failed_quantity and add_target == row.offer_id|stringformat:'s' %}{{ failed_quantity }}{% else %}1{% endif %}"
                 {% if add_form.errors and add_target == row.offer_id|stringformat:'s' %}aria-invalid="true" aria-describedby="add-error"{% endif %}
                 {% if row.sold_out %}disabled{% endif %}>
          <button type="submit" class="btn btn-secondary btn-sm" {% if row.sold_out %}disabled{% endif %}>Add<span class="visually-hidden"> from {{ row.merchant_name }}</span></button>
        </form>
      </li>
      {% endfor %}"""

ROW = {
    "offer_id": 7,
    "merchant_name": 'O\'Brien & <Sons> "Quoted"',
    "cheapest": True,
    "sold_out": False,
    "low_stock": False,
    "stock": None,
    "price": "€22.00",
    "max_quantity": 999,
    "shipping": "€4.99 shipping, free from €50.00",
    "discount": "5% off 3+ units",
    "zone_rate": True,
    "delivered": "€26.99",
    "delivered_label": "delivered",
    "delivered_note": "€22.00 + €4.99 shipping",
}
ROWS = [
    ROW,
    {**ROW, "offer_id": 8, "cheapest": False, "sold_out": True, "stock": 0, "discount": ""},
    {**ROW, "offer_id": 9, "cheapest": False, "low_stock": True, "stock": 3, "zone_rate": False},
    {**ROW, "offer_id": 10, "cheapest": False, "stock": 40, "max_quantity": 40, "delivered": ""},
]


class _Form:
    def __init__(self, errors: bool):
        self.errors = {"quantity": ["Too many."]} if errors else {}


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"add_form": _Form(errors=True), "add_target": "9", "failed_quantity": "55"},
        {"add_form": _Form(errors=False), "add_target": "cheapest", "failed_quantity": "2"},
    ],
)
@pytest.mark.parametrize("csrf_token", [CSRF_MARKER, "realTOKEN123", ""])
def test_offer_rows_match_the_django_loop(state, csrf_token):
    values = {
        "offer_views": ROWS,
        "cart_add_url": "/cart/add/",
        "postal_code": "10115",
        "add_form": None,
        "add_target": None,
        "failed_quantity": None,
        **state,
    }
    expected = Template(DJANGO_LOOP).render(Context({**values, "csrf_token": csrf_token}))
    context = Context({"csrf_token": csrf_token})
    rows = {key: value for key, value in values.items() if key != "offer_views"}
    rendered = jinja_include(context, "web/_offer_rows.html", rows=ROWS, **rows)
    assert rendered == expected
    assert "O&#x27;Brien &amp; &lt;Sons&gt; &quot;Quoted&quot;" in rendered
