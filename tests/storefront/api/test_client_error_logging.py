"""A 4xx (permission denied, CSRF failure, lockout) is logged as one warning line without a
traceback; a 5xx keeps its traceback."""

import logging

import pytest
from django.core.exceptions import PermissionDenied
from django.core.handlers.exception import response_for_exception
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.utils.log import log_response

pytestmark = pytest.mark.django_db


def _records(caplog, name: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == name]


def test_permission_denied_is_one_warning_line_without_traceback(caplog):
    request = RequestFactory().get("/cart/")
    with caplog.at_level(logging.WARNING):
        response = response_for_exception(request, PermissionDenied("not yours"))
    assert response.status_code == 403
    [record] = _records(caplog, "django.request")
    assert record.levelno == logging.WARNING
    assert record.exc_info is None
    assert "\n" not in caplog.text.strip()
    assert "Traceback" not in caplog.text


def test_csrf_failure_is_one_warning_line(caplog):
    client = Client(enforce_csrf_checks=True)
    with caplog.at_level(logging.WARNING):
        response = client.post("/cart/add/", {"offer": 1, "quantity": 1})
    assert response.status_code == 403
    records = _records(caplog, "django.security.csrf")
    assert [record.levelno for record in records] == [logging.WARNING]
    assert all(record.exc_info is None for record in records)
    assert "Traceback" not in caplog.text


def test_a_server_error_keeps_its_traceback(caplog):
    request = RequestFactory().get("/boom/")
    try:
        raise RuntimeError("boom")
    except RuntimeError as error:
        with caplog.at_level(logging.ERROR):
            log_response(
                "Internal Server Error: %s",
                request.path,
                response=HttpResponse(status=500),
                request=request,
                exception=error,
            )
    [record] = _records(caplog, "django.request")
    assert record.levelno == logging.ERROR
    assert record.exc_info is not None
    assert "Traceback" in caplog.text


def test_the_console_handler_drops_a_4xx_traceback():
    from storefront.observability.log_filters import ClientErrorWithoutTraceback

    try:
        raise PermissionDenied("no")
    except PermissionDenied as error:
        exc_info = (type(error), error, error.__traceback__)
    record = logging.LogRecord("django.security.X", logging.ERROR, __file__, 1, "no", (), exc_info)
    record.status_code = 400
    assert ClientErrorWithoutTraceback().filter(record) and record.exc_info is None
    record = logging.LogRecord("django.request", logging.ERROR, __file__, 1, "boom", (), exc_info)
    record.status_code = 500
    assert ClientErrorWithoutTraceback().filter(record) and record.exc_info is not None
