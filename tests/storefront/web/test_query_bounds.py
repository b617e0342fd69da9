"""A shopper page given an integer past the database's range (or not an integer) ignores
that filter, as it does other bad values, instead of answering 500."""

import pytest
from django.urls import reverse

from storefront.bounds import DB_INT_MAX

pytestmark = pytest.mark.django_db

HUGE = "86814030363318621176856576"
BAD_VALUES = [HUGE, str(DB_INT_MAX + 1), f"-{HUGE}", "-1", "0", "abc", "1.5", "9" * 5000]


def test_catalog_with_a_merchant_past_the_databases_integers_lists_everything(client, market):
    everything = client.get(reverse("catalog")).context["page"].paginator.count
    response = client.get(f"{reverse('catalog')}?merchant={HUGE}")
    assert response.status_code == 200
    assert response.context["page"].paginator.count == everything
    assert "merchant" in response.context["form"].errors


@pytest.mark.parametrize("param", ["merchant", "page", "category", "price"])
@pytest.mark.parametrize("value", BAD_VALUES)
def test_catalog_integer_params_with_bad_values_are_ignored(client, market, param, value):
    response = client.get(reverse("catalog"), {param: value})
    assert response.status_code == 200
    assert response.context["page"].number == 1


@pytest.mark.parametrize("field", ["offer", "product"])
def test_add_to_cart_with_an_id_past_the_databases_integers_is_a_form_error(client, market, field):
    response = client.post(reverse("cart_add"), {field: HUGE, "quantity": 1})
    assert response.status_code < 500


@pytest.mark.parametrize("name", ["cart_line_update", "cart_line_remove"])
def test_cart_line_ids_past_the_databases_integers_are_not_a_500(client, market, name):
    client.post(reverse("cart_add"), {"offer": market.dear_offers[0].pk, "quantity": 1})
    response = client.post(reverse(name, args=[int(HUGE)]), {"quantity": 1})
    assert response.status_code < 500
