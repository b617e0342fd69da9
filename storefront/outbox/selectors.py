"""Reading the outbox."""

from django.db.models import Count

from storefront.outbox.models import OutboxMessage


def outbox_backlog() -> dict[str, int]:
    """Undelivered messages by status (one indexed query), every status present."""
    waiting = [OutboxMessage.Status.PENDING, OutboxMessage.Status.FAILED]
    counts = dict(
        OutboxMessage.objects.filter(status__in=waiting)
        .values_list("status")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return {str(status): counts.get(status, 0) for status in waiting}
