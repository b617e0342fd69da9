"""SQL kept per query shape: the same rows as a fresh compile, the request's values bound,
and no shape kept where a value does not reach the parameters as it is."""

import threading

import pytest
from django.db.models import Q, QuerySet

from storefront.catalog.sql_shapes import (
    Slots,
    shaped_count,
    shaped_list,
    shaped_sql,
    shapes_clear,
)
from storefront.models import Product
from tests.factories import CategoryFactory, ProductFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_shapes():
    shapes_clear()
    yield
    shapes_clear()


@pytest.fixture
def products():
    tools, books = CategoryFactory(name="Tools"), CategoryFactory(name="Books")
    made = [ProductFactory(name=f"Hammer {i}", category=tools) for i in range(5)]
    made += [ProductFactory(name=f"Atlas {i}", category=books) for i in range(3)]
    return {"tools": tools, "books": books, "all": made}


def in_category(category_id: int) -> QuerySet:
    return Product.objects.filter(category_id=category_id).order_by("name", "id")


def names_in(category_id: int, window=None) -> list[str]:
    slots = Slots()
    slots.number(category_id)
    rows = shaped_list(
        key="test-category",
        slots=slots,
        build=lambda sentinels: in_category(sentinels.number(category_id)),
        plain=lambda: in_category(category_id),
        window=window,
    )
    return [product.name for product in rows]


def plain_names(category_id: int) -> list[str]:
    return [product.name for product in in_category(category_id)]


def test_each_call_binds_its_own_values_into_one_kept_sql(products):
    tools, books = products["tools"].pk, products["books"].pk
    assert names_in(tools) == plain_names(tools)
    assert names_in(books) == plain_names(books)  # the kept SQL, other values
    slots = Slots()
    slots.number(books)
    sql, params = shaped_sql(
        key="test-category", slots=slots, build=lambda s: in_category(s.number(books))
    )
    fresh_sql, fresh_params = in_category(books).query.sql_with_params()
    assert (sql, params) == (fresh_sql, tuple(fresh_params))


def test_a_window_is_a_page_of_the_same_sql(products):
    tools = products["tools"].pk
    every = plain_names(tools)
    assert names_in(tools, window=(0, 2)) == every[0:2]
    assert names_in(tools, window=(2, 4)) == every[2:4]
    assert names_in(tools, window=(4, 99)) == every[4:]


def test_models_are_built_as_django_builds_them(products):
    tools = products["tools"].pk
    slots = Slots()
    slots.number(tools)
    rows = shaped_list(
        key="test-related",
        slots=slots,
        build=lambda s: in_category(s.number(tools)).select_related("category"),
        plain=lambda: in_category(tools).select_related("category"),
    )
    fresh = list(in_category(tools).select_related("category"))
    assert [(p.pk, p.name, p.category.name, p.created_at) for p in rows] == [
        (p.pk, p.name, p.category.name, p.created_at) for p in fresh
    ]


def test_a_transformed_value_keeps_no_shape_and_runs_plainly(products):
    def named(text: str) -> QuerySet:
        return Product.objects.filter(name__icontains=text).order_by("id")

    def run(text: str) -> list[str]:
        slots = Slots()
        slots.text(text)
        return [
            p.name
            for p in shaped_list(
                key="test-like",
                slots=slots,
                build=lambda s: named(s.text(text)),
                plain=lambda: named(text),
            )
        ]

    assert run("hammer") == [p.name for p in named("hammer")]
    assert run("atl") == [p.name for p in named("atl")]
    slots = Slots()
    slots.text("x")
    assert shaped_sql(key="test-like", slots=slots, build=lambda s: named(s.text("x"))) is None


def test_a_value_written_into_the_sql_keeps_no_shape(products):
    def first(n: int) -> QuerySet:
        return Product.objects.order_by("id")[:n]  # LIMIT is written into the text

    slots = Slots()
    slots.number(2)
    assert shaped_sql(key="test-limit", slots=slots, build=lambda s: first(s.number(2))) is None


@pytest.mark.django_db(transaction=True)
def test_threads_share_kept_shapes(products):
    tools, books = products["tools"].pk, products["books"].pk
    expected = {tools: plain_names(tools), books: plain_names(books)}
    failures: list[object] = []

    def work(n: int) -> None:
        from django.db import connection

        try:
            for i in range(20):
                category = tools if (i + n) % 2 else books
                if names_in(category) != expected[category]:
                    failures.append((n, i))
        except Exception as error:  # pragma: no cover - reported below
            failures.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_a_count_binds_its_values(products):
    def count(category_id: int) -> int | None:
        slots = Slots()
        slots.number(category_id)
        return shaped_count(
            key="test-count", slots=slots, build=lambda s: in_category(s.number(category_id))
        )

    assert count(products["tools"].pk) == 5
    assert count(products["books"].pk) == 3
    assert count(products["books"].pk + 1000) == 0


def test_shapes_can_be_switched_off(products, settings):
    settings.SQL_SHAPES = False
    tools = products["tools"].pk
    assert names_in(tools) == plain_names(tools)
    slots = Slots()
    slots.number(tools)
    assert shaped_sql(key="test-off", slots=slots, build=lambda s: in_category(s.number(1))) is None


def test_a_condition_on_a_narrow_column_keeps_the_request_value(products):
    """Django drops a condition whose value is out of its column's range while compiling; the
    sentinels fit any integer column, so the kept SQL keeps the condition and its value."""
    from storefront.models import Offer
    from tests.factories import OfferFactory

    product = products["all"][0]
    few, many = OfferFactory(product=product, stock=3), OfferFactory(product=product, stock=50)

    def stocked(at_least: int) -> QuerySet:
        return Offer.objects.filter(Q(stock__isnull=True) | Q(stock__gte=at_least)).order_by("id")

    for at_least, expected in ((10, [many.pk]), (1, [few.pk, many.pk]), (10**6, [])):
        slots = Slots()
        slots.number(at_least)
        rows = shaped_list(
            key="test-stock",
            slots=slots,
            build=lambda s, n=at_least: stocked(s.number(n)),
            plain=lambda n=at_least: stocked(n),
        )
        assert [offer.pk for offer in rows if offer.product_id == product.pk] == expected
        assert [o.pk for o in rows] == [o.pk for o in stocked(at_least)]


def test_a_number_no_column_holds_runs_plainly(products):
    from storefront.catalog.selectors import product_get
    from storefront.errors import NotFound

    product = products["all"][0]
    assert product_get(product_id=product.pk).pk == product.pk  # keeps the shape
    with pytest.raises(NotFound):
        product_get(product_id=10**20)
