from datetime import UTC, date, datetime

import pytest

from storefront.errors import ValidationFailed
from storefront.statements.periods import period_current_month, period_days, period_month


def test_a_month_runs_from_its_first_midnight_to_the_next_months(settings):
    settings.TIME_ZONE = "UTC"
    december = period_month(year=2026, month=12)
    assert (december.first_day, december.last_day) == (date(2026, 12, 1), date(2026, 12, 31))
    assert december.start == datetime(2026, 12, 1, tzinfo=UTC)
    assert december.end == datetime(2027, 1, 1, tzinfo=UTC)
    assert december.label == "December 2026"
    assert period_month(year=2028, month=2).last_day == date(2028, 2, 29)


def test_days_include_both_ends_in_the_shops_time_zone(settings):
    settings.TIME_ZONE = "Europe/Berlin"
    period = period_days(first_day=date(2026, 7, 3), last_day=date(2026, 7, 4))
    assert period.start == datetime(2026, 7, 2, 22, tzinfo=UTC)
    assert period.end == datetime(2026, 7, 4, 22, tzinfo=UTC)
    assert period.label == "2026-07-03 to 2026-07-04"


@pytest.mark.parametrize(
    ("first", "last", "code"),
    [
        (date(2026, 5, 2), date(2026, 5, 1), "period_reversed"),
        (date(2025, 1, 1), date(2026, 1, 3), "period_too_long"),
    ],
)
def test_impossible_ranges_are_refused(first, last, code):
    with pytest.raises(ValidationFailed) as error:
        period_days(first_day=first, last_day=last)
    assert error.value.code == code


@pytest.mark.parametrize(("year", "month"), [(2026, 0), (2026, 13), (0, 1), (9999, 12)])
def test_no_such_month(year, month):
    with pytest.raises(ValidationFailed):
        period_month(year=year, month=month)


def test_the_current_month():
    period = period_current_month(now=datetime(2026, 11, 30, 23, 59, tzinfo=UTC))
    assert period.first_day == date(2026, 11, 1)
