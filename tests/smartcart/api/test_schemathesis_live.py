"""schemathesis fuzzes every operation of the published schema against a live gunicorn
(DEBUG off, its own SQLite database), a bounded number of examples each and bounded in time,
anonymous and with a shopper's token, with every check: no 5xx, every response conforms to
the schema, schema-valid requests are accepted and schema-violating ones refused (the answers
that depend on data rather than on the request's shape are listed in schemathesis.toml)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.live_server import ROOT, free_port, gunicorn, manage, serve, server_env

EXAMPLES_PER_OPERATION = 20
MAX_TIME_S = 60
CONFIG = Path(__file__).with_name("schemathesis.toml")

SHOPPER_TOKEN = """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from storefront.models import Offer
from storefront.carts.services import cart_line_add, cart_get_or_create
user = get_user_model().objects.create_user("fuzz", password="fuzz-pass-123")
cart = cart_get_or_create(user=user)
for offer in Offer.objects.order_by("id")[:3]:
    cart_line_add(cart=cart, offer=offer, quantity=1)
print(Token.objects.create(user=user).key)
"""


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """The live server and a shopper's token, for both runs."""
    tmp_path = tmp_path_factory.mktemp("live")
    port = free_port()
    env = server_env(
        database_url=f"sqlite:///{tmp_path / 'live.sqlite3'}",
        # The fuzzer is one client sending hundreds of requests: limits would hide the API.
        TOKEN_THROTTLE_RATE="100000/min",
        OPTIMIZE_THROTTLE_RATE="100000/min",
        LOGIN_FAILURE_LIMIT="100000",
    )
    manage(env, "migrate", "--noinput")
    manage(env, "seed_demo", "--merchants", "5", "--products", "40")
    token = manage(env, "shell", "-c", SHOPPER_TOKEN).strip().splitlines()[-1]
    with serve(env, gunicorn(port, workers=2), port=port) as base:
        yield env, base, token


@pytest.mark.slow
@pytest.mark.parametrize("auth", ["anonymous", "token"])
def test_schemathesis_finds_no_server_error_and_no_schema_violation(live, auth):
    env, base, token = live
    headers = ["--header", f"Authorization: Token {token}"] if auth == "token" else []
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "--config-file",
            str(CONFIG),
            "run",
            f"{base}/api/v1/schema/?format=json",
            "--url",
            base,
            "--checks",
            "all",
            "--phases",
            "examples,fuzzing",
            "--max-examples",
            str(EXAMPLES_PER_OPERATION),
            "--max-time",
            str(MAX_TIME_S),
            "--seed",
            "15",
            "--request-timeout",
            "30",
            *headers,
            "--generation-database",
            "none",
            "--no-color",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=MAX_TIME_S + 120,
        check=False,
    )
    if run.returncode != 0:
        # pytest.fail, not assert: pytest cuts long assertion messages to a few lines.
        pytest.fail(_failures(run.stdout + run.stderr), pytrace=False)


def _failures(output: str) -> str:
    """The FAILURES section of schemathesis' report (operation, check, status and the
    reproducing curl line), not just its tail, which may hold only the summary."""
    start = output.find("FAILURES")
    if start == -1:
        return output[-6000:]
    return output[output.rfind("\n", 0, start) + 1 :]
