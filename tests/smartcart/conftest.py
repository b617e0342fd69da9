import pytest

from tests.carts import cart_with_choices
from tests.factories import UserFactory


@pytest.fixture
def shopper(db):
    return UserFactory(username="alice")


@pytest.fixture
def cart(shopper):
    return cart_with_choices(owner=shopper)
