# The Improve pages live on the cart page: they share the shopper pages' marketplace.
from tests.storefront.web.conftest import market, shopper  # noqa: F401
