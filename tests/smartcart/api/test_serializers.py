import pytest
from django.test import RequestFactory, override_settings
from rest_framework import serializers
from rest_framework.request import Request

from smartcart import services
from smartcart.apis import OptimizationRunSerializer

pytestmark = pytest.mark.django_db


class _DeepCopiedFields(OptimizationRunSerializer):
    """DRF's own field copies, to hold the shallow ones to."""

    def get_fields(self):
        return serializers.Serializer.get_fields(self)


@pytest.fixture
def request_():
    return Request(RequestFactory().get("/", secure=True, HTTP_HOST="shop.example"))


def test_run_representation_is_drfs_own(
    cart, shopper, request_, django_capture_on_commit_callbacks
):
    done = services.optimization_run_create(cart=cart, requested_by=shopper)
    services.optimization_run_dismiss(run=done)
    with (
        override_settings(SMARTCART_INLINE_MAX_MS=0),
        django_capture_on_commit_callbacks(execute=False),
    ):
        queued = services.optimization_run_create(cart=cart)
    failed = services.optimization_run_fail(run_id=queued.pk, reason="Lost.")
    for run in (done, queued, failed):
        context = {"request": request_}
        data = OptimizationRunSerializer(run, context=context).data
        assert data == _DeepCopiedFields(run, context=context).data
        assert data["url"].startswith("https://shop.example/")
    many = OptimizationRunSerializer([done, failed], many=True, context={"request": request_})
    assert [item["id"] for item in many.data] == [done.pk, failed.pk]
    # The declared fields stay unbound: every serializer binds copies of its own.
    assert all(
        field.parent is None for field in OptimizationRunSerializer._declared_fields.values()
    )
