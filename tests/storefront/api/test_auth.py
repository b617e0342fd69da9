import pytest

from tests.factories import TEST_PASSWORD

pytestmark = pytest.mark.django_db

URL = "/api/v1/auth/token/"


@pytest.mark.slow
def test_token_obtain_and_use(api, shopper):
    response = api.post(URL, {"username": "alice", "password": TEST_PASSWORD}, format="json")
    assert response.status_code == 200
    token = response.json()["token"]
    again = api.post(URL, {"username": "alice", "password": TEST_PASSWORD}, format="json")
    assert again.json()["token"] == token
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.post("/api/v1/cart/").status_code == 201


@pytest.mark.parametrize(
    ("payload", "code", "field"),
    [
        ({"username": "alice", "password": "wrong"}, "invalid_credentials", "password"),
        ({"username": "nobody", "password": "x"}, "invalid_credentials", "password"),
        ({"username": "alice"}, "required", "password"),
    ],
)
def test_token_obtain_refuses(api, shopper, payload, code, field):
    response = api.post(URL, payload, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["field"] == field


def test_bad_token_is_401(api):
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = api.get("/api/v1/cart/")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_token_obtain_is_throttled(api, shopper, monkeypatch):
    from storefront.api.throttles import TokenObtainRateThrottle

    monkeypatch.setattr(TokenObtainRateThrottle, "get_rate", lambda self: "3/min")
    codes = [
        api.post(URL, {"username": "alice", "password": "wrong"}, format="json").status_code
        for _ in range(4)
    ]
    assert codes == [400, 400, 400, 429]


def test_token_rate_defaults_to_ten_a_minute(settings):
    from storefront.api.throttles import TokenObtainRateThrottle

    rates = dict(settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}))
    rates.pop("token", None)
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": rates}
    assert TokenObtainRateThrottle().get_rate() == "10/min"
