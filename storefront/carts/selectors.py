"""Cart reads: a cart and its lines, for a user or a session."""

from django.db.models import Prefetch, QuerySet

from storefront.errors import NotFound
from storefront.models import Cart, CartLine


def cart_line_list(*, cart: Cart) -> QuerySet[CartLine]:
    """A cart's lines in the order they were added, with offer, merchant, product, category."""
    return (
        CartLine.objects.filter(cart_id=cart.pk)
        .select_related("offer__merchant", "product__category")
        .order_by("created_at", "id")
    )


def cart_line_for_product(*, cart: Cart, product) -> CartLine | None:
    """The cart's line of ``product`` (a cart holds at most one per product), with its offer
    and merchant; ``None`` when the product is not in the cart."""
    lines = CartLine.objects.select_related("offer__merchant")
    return lines.filter(cart=cart, product=product).first()


def cart_get(
    *, cart_id: int, owner=None, session_key: str | None = None, with_lines: bool = True
) -> Cart:
    """A cart by id, only if it belongs to ``owner`` (a user) or ``session_key``.

    Someone else's cart is ``NotFound``, never "forbidden": its existence is not revealed.
    ``with_lines`` prefetches the lines as ``cart_line_list`` selects them (two queries).
    """
    carts = Cart.objects.all()
    if owner is not None and getattr(owner, "is_authenticated", False):
        carts = carts.filter(owner=owner)
    elif session_key:
        carts = carts.filter(owner__isnull=True, session_key=session_key)
    else:
        raise NotFound("No such cart.", code="cart_not_found", field="cart")
    if with_lines:
        lines = CartLine.objects.select_related("offer__merchant", "product__category").order_by(
            "created_at", "id"
        )
        carts = carts.prefetch_related(Prefetch("lines", queryset=lines))
    try:
        return carts.get(pk=cart_id)
    except (Cart.DoesNotExist, ValueError, TypeError):
        raise NotFound("No such cart.", code="cart_not_found", field="cart") from None


def cart_find(*, user=None, session_key: str | None = None) -> Cart | None:
    """The cart of a signed-in user, else of an anonymous session, else ``None`` (no writes)."""
    if user is not None and getattr(user, "is_authenticated", False):
        return Cart.objects.filter(owner=user).first()
    if session_key:
        return Cart.objects.filter(owner__isnull=True, session_key=session_key).first()
    return None
