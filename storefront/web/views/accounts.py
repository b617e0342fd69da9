"""Login, logout and sign-up. Logging in (either way) merges the anonymous cart, see
``storefront.web.signals``."""

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from storefront.web.carts import request_cart_find
from storefront.web.forms import SignUpForm
from storefront.web.views.common import safe_next


def _anonymous_cart_units(request: HttpRequest) -> int:
    cart = request_cart_find(request) if not request.user.is_authenticated else None
    return sum(cart.lines.values_list("quantity", flat=True)) if cart is not None else 0


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
