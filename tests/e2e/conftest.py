"""Browser tests: Playwright drives Debian's headless Chromium against pytest-django's live
server. Playwright's own browser download does not work here, hence the system binary.

Playwright's sync API runs an event loop in the test thread, and Django refuses database
access from a thread with a running loop unless told it is safe: the tests and the server
never share a connection across threads, so it is.
"""

import os
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="package")
def async_unsafe_allowed():
    """Set only while the browser tests run: the flag must not leak into other tests (Django's
    deployment checks refuse it)."""
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    yield
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="package")
def browser(async_unsafe_allowed):
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        yield browser
        browser.close()


def _new_page(browser, live_server, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    context.set_default_timeout(15_000)
    page = context.new_page()
    return context, page


@pytest.fixture
def page(browser, live_server):
    context, page = _new_page(browser, live_server, DESKTOP)
    yield page
    context.close()


@pytest.fixture
def phone_page(browser, live_server):
    context, page = _new_page(browser, live_server, PHONE)
    yield page
    context.close()


@pytest.fixture
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture
def demo_catalog(transactional_db):
    """A small demo marketplace from the real seed command (and the demo accounts)."""
    from django.core.management import call_command

    call_command("seed_demo", "--seed", "7", "--merchants", "8", "--products", "30", verbosity=0)
