"""The periods a statement covers: a calendar month or a range of days, in the shop's time
zone (``TIME_ZONE``), as a half-open interval of aware datetimes ``[start, end)``."""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.utils import timezone

from storefront.errors import ValidationFailed

# A year and a day: a leap year's statement fits, a runaway query over all time does not.
MAX_PERIOD_DAYS = 367


@dataclass(frozen=True)
class Period:
    first_day: date
    last_day: date

    @property
    def start(self) -> datetime:
        return _midnight(self.first_day)

    @property
    def end(self) -> datetime:
        return _midnight(self.last_day + timedelta(days=1))

    @property
    def label(self) -> str:
        first, last = self.first_day, self.last_day
        if first.day == 1 and last == _month_last_day(first.year, first.month):
            return first.strftime("%B %Y")
        return f"{first.isoformat()} to {last.isoformat()}"


def _midnight(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min), timezone.get_default_timezone())


def _month_last_day(year: int, month: int) -> date:
    following = date(year + month // 12, month % 12 + 1, 1)
    return following - timedelta(days=1)


def period_month(*, year: int, month: int) -> Period:
    """The calendar month ``year``-``month``."""
    if not 1 <= month <= 12 or not 1 <= year <= 9998:
        raise ValidationFailed("No such month.", code="month_invalid", field="month")
    return Period(first_day=date(year, month, 1), last_day=_month_last_day(year, month))


def period_days(*, first_day: date, last_day: date) -> Period:
    """The days from ``first_day`` to ``last_day``, both included."""
    if last_day < first_day:
        raise ValidationFailed(
            "The last day comes before the first.", code="period_reversed", field="last_day"
        )
    if (last_day - first_day).days >= MAX_PERIOD_DAYS:
        raise ValidationFailed(
            f"At most {MAX_PERIOD_DAYS} days in one statement.",
            code="period_too_long",
            field="last_day",
        )
    if last_day.year > 9998:
        raise ValidationFailed("No such day.", code="day_invalid", field="last_day")
    return Period(first_day=first_day, last_day=last_day)


def period_current_month(*, now: datetime | None = None) -> Period:
    today = timezone.localdate(now or timezone.now())
    return period_month(year=today.year, month=today.month)
