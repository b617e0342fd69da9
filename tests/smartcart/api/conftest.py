# The API fixtures are storefront's (smartcart's tests may lean on storefront's, never the other
# way round); ``alice_api`` signs in this package's ``shopper`` (tests/smartcart/conftest.py).
from tests.storefront.api.conftest import (  # noqa: F401  (fixtures)
    _fresh_throttles,
    alice_api,
    api,
    client_for,
)
