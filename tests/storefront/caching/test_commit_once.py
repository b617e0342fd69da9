"""A pending on-commit object whose work fails is logged and the commit stands (robust), as
for any robust callback: the request that made the write answers as usual."""

import logging

import pytest
from django.db import transaction

from storefront.caching.commit_once import on_commit_once


class _Failing:
    def __init__(self, block: object | None) -> None:
        self.block = block

    def __call__(self) -> None:
        raise ConnectionError("the cache is down")


@pytest.mark.django_db(transaction=True)
def test_a_failing_pending_callback_is_logged_and_the_commit_stands(caplog):
    with caplog.at_level(logging.ERROR, logger="django.db.backends.base"), transaction.atomic():
        first = on_commit_once(_Failing, _Failing)
        assert on_commit_once(_Failing, _Failing) is first  # one per transaction
    assert "_Failing" in caplog.text and "the cache is down" in caplog.text


def test_outside_a_transaction_the_caller_acts_at_once():
    assert on_commit_once(_Failing, _Failing) is None
