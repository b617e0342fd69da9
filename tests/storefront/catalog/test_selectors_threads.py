"""The catalog selectors build their querysets on a resolved base kept per thread: under
gunicorn's threads, a base shared by the process had two threads compile one subquery at once
and drop its merchant join ("missing FROM-clause entry for table u1", a 500 on the home page)."""

import threading

import pytest

from storefront.catalog import selectors


def _sql() -> tuple[str, ...]:
    return (
        str(selectors.product_list(ordering="price")[:24].query),
        str(selectors.product_with_best_price_list().values("category_id").query),
    )


@pytest.mark.slow
def test_selectors_compile_the_same_sql_in_many_threads_at_once():
    expected = _sql()
    wrong: list[tuple[str, ...]] = []
    start = threading.Barrier(6)

    def compile_many() -> None:
        start.wait()
        for _ in range(150):
            got = _sql()
            if got != expected:
                wrong.append(got)
                return

    threads = [threading.Thread(target=compile_many) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
