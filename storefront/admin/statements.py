"""The merchant statement in the admin (``/admin/storefront/merchant/statement/``): merchant
staff read their own merchant's only, catalog admins any merchant's; a calendar month or a
range of days; the same statement as CSV (``format=csv``). The figures and their definitions
are ``storefront.statements.selectors``'; the page only chooses and shows them.

The view hangs off the merchant admin (a custom URL, no model of its own); admin_view lets
in any active staff member and ``merchant_statement`` decides which merchant they may read.
"""

from datetime import date

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path
from django.utils import timezone
from django.utils.text import slugify

from storefront.admin.merchants import MerchantAdmin
from storefront.errors import NotFound, ValidationFailed
from storefront.models import Merchant
from storefront.statements.exports import statement_csv_write
from storefront.statements.periods import (
    Period,
    period_current_month,
    period_days,
    period_month,
)
from storefront.statements.selectors import Statement, merchant_statement, statement_merchants


class StatementPeriodForm(forms.Form):
    """A month (``YYYY-MM``), or a first and last day; neither: the current month."""

    month = forms.RegexField(
        regex=r"^\d{4}-\d{2}$",
        required=False,
        widget=forms.TextInput(attrs={"type": "month", "placeholder": "YYYY-MM"}),
        error_messages={"invalid": "Enter a month as YYYY-MM."},
    )
    first_day = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    last_day = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )

    def clean(self):
        super().clean()
        data = self.cleaned_data
        first, last = data.get("first_day"), data.get("last_day")
        try:
            data["period"] = self._period(data.get("month"), first, last)
        except ValidationFailed as error:
            raise forms.ValidationError(error.message) from error
        return data

    def _period(self, month: str | None, first: date | None, last: date | None) -> Period:
        if first or last:
            if not (first and last):
                raise ValidationFailed("Give both days, or a month.", code="period_incomplete")
            return period_days(first_day=first, last_day=last)
        if month:
            year, number = (int(part) for part in month.split("-"))
            return period_month(year=year, month=number)
        return period_current_month()


def _merchant_id(request: HttpRequest, merchants) -> int:
    chosen = request.GET.get("merchant", "")
    if chosen:
        if not chosen.isdigit() or len(chosen) > 18:
            raise Http404("No such merchant.")
        return int(chosen)
    first = merchants.values_list("pk", flat=True).first()
    if first is None:
        raise PermissionDenied
    return int(first)


def _csv_response(statement: Statement) -> HttpResponse:
    period = statement.period
    name = (
        f"statement-{slugify(statement.merchant_name) or statement.merchant_id}-"
        f"{period.first_day.isoformat()}-{period.last_day.isoformat()}.csv"
    )
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    statement_csv_write(statement=statement, out=response)
    return response


class MerchantStatementAdmin(MerchantAdmin):
    def get_urls(self):
        view = self.admin_site.admin_view(self.statement_view)
        urls = [path("statement/", view, name="storefront_merchant_statement")]
        return urls + super().get_urls()

    def statement_view(self, request: HttpRequest) -> HttpResponse:
        merchants = statement_merchants(user=request.user)
        merchant_id = _merchant_id(request, merchants)
        chosen = {
            name: request.GET[name]
            for name in StatementPeriodForm.base_fields
            if name in request.GET
        }
        form = StatementPeriodForm(chosen or {"month": timezone.localdate().strftime("%Y-%m")})
        statement = None
        if form.is_valid():
            try:
                statement = merchant_statement(
                    user=request.user, merchant_id=merchant_id, period=form.cleaned_data["period"]
                )
            except NotFound as error:
                raise Http404(error.message) from error
            if request.GET.get("format") == "csv":
                return _csv_response(statement)
        elif not merchants.filter(pk=merchant_id).exists():
            raise Http404("No such merchant.")
        query = request.GET.copy()
        query["format"] = "csv"
        query["merchant"] = str(merchant_id)
        context = {
            **self.admin_site.each_context(request),
            "title": "Statement",
            "form": form,
            "statement": statement,
            "merchants": merchants if merchants.count() > 1 else None,
            "merchant_id": merchant_id,
            "csv_query": query.urlencode(),
        }
        return TemplateResponse(request, "admin/storefront/statement.html", context)


admin.site.unregister(Merchant)
admin.site.register(Merchant, MerchantStatementAdmin)
