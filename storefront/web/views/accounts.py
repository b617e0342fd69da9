"""Login, logout, sign-up and password reset. Logging in (any way, also right after a
password reset) merges the anonymous cart, see ``storefront.web.signals``."""

import math
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.views import (
    LoginView,
    LogoutView,
    PasswordResetConfirmView,
    PasswordResetDoneView,
    PasswordResetView,
)
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.utils.timesince import timeuntil
from django.views.generic.base import ContextMixin

from storefront.accounts.services import password_reset_request, user_api_tokens_revoke
from storefront.security.client_ip import client_ip
from storefront.security.form_limits import login_rate_limited, signup_rate_limited
from storefront.web.carts import request_cart_find
from storefront.web.forms import SignUpForm
from storefront.web.views.common import safe_next


def _anonymous_cart_units(request: HttpRequest) -> int:
    cart = request_cart_find(request) if not request.user.is_authenticated else None
    return sum(cart.lines.values_list("quantity", flat=True)) if cart is not None else 0


@method_decorator(login_rate_limited, name="post")
class ShopLoginView(LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["cart_units"] = _anonymous_cart_units(self.request)
        return context

    def form_valid(self, form):
        response = super().form_valid(form)
        messages.success(self.request, f"Welcome back, {form.get_user().get_username()}.")
        return response


class ShopLogoutView(LogoutView):
    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You are signed out. Your cart is saved in your account.")
        return response


@signup_rate_limited
def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("catalog")
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}! Your account is ready.")
        return redirect(safe_next(request, next_url, fallback=reverse("catalog")))
    status = 400 if request.method == "POST" else 200
    context = {"form": form, "next": next_url, "cart_units": _anonymous_cart_units(request)}
    return render(request, "registration/signup.html", context, status=status)


def _in_words(seconds: int) -> str:
    """``"3 days"``, ``"12 minutes"``: whole minutes at least (plain text, no no-break space)."""
    now = timezone.now()
    minutes = max(1, math.ceil(seconds / 60))
    return timeuntil(now + timedelta(minutes=minutes), now).replace("\xa0", " ")


class _ResetLinkLifetimeMixin(ContextMixin):
    """Tells the shopper how long a reset link works (``PASSWORD_RESET_TIMEOUT``)."""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["link_valid_for"] = _in_words(settings.PASSWORD_RESET_TIMEOUT)
        return context


class ShopPasswordResetView(PasswordResetView):
    """Django's reset: an unknown address gets the same "check your inbox" page, and no mail."""

    def get_form(self, form_class=None):
        form = super().get_form(form_class)
        form.fields["email"].widget.attrs["autofocus"] = True
        return form

    def form_valid(self, form):
        request = self.request
        retry_after = password_reset_request(
            email=form.cleaned_data["email"],
            client=client_ip(request),
            domain=request.get_host(),
            use_https=request.is_secure(),
            link_valid_for=_in_words(settings.PASSWORD_RESET_TIMEOUT),
        )
        if retry_after is None:
            return redirect(self.get_success_url())
        form.add_error(
            None, f"Too many reset requests. Please try again in {_in_words(retry_after)}."
        )
        response = self.render_to_response(self.get_context_data(form=form), status=429)
        response["Retry-After"] = str(retry_after)
        return response


class ShopPasswordResetDoneView(_ResetLinkLifetimeMixin, PasswordResetDoneView):
    pass


class ShopPasswordResetConfirmView(_ResetLinkLifetimeMixin, PasswordResetConfirmView):
    # The shopper has just shown they own the mailbox and chosen the password: signing them in
    # spares typing it again. login() sends user_logged_in, so the anonymous cart merges as at
    # any login; the new password hash signs out the account's other browser sessions.
    post_reset_login = True
    post_reset_login_backend = "django.contrib.auth.backends.ModelBackend"

    def form_valid(self, form):
        response = super().form_valid(form)
        # Sessions die with the old password hash; API tokens do not, so revoke them too.
        user_api_tokens_revoke(user=form.user)
        return response
