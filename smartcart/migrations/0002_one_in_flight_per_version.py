from django.db import migrations, models
from django.db.models import Max


def fail_duplicate_in_flight_runs(apps, schema_editor):
    """Before the constraint: of several runs in flight for one cart version (possible until
    now), keep the newest and fail the others, as a lost duplicate would have been."""
    run_model = apps.get_model("smartcart", "OptimizationRun")
    in_flight = run_model.objects.filter(
        status__in=["queued", "running"], dismissed_at__isnull=True
    )
    newest = (
        in_flight.values("cart_id", "cart_version")
        .annotate(keep=Max("id"), count=models.Count("id"))
        .filter(count__gt=1)
    )
    for group in newest:
        in_flight.filter(cart_id=group["cart_id"], cart_version=group["cart_version"]).exclude(
            pk=group["keep"]
        ).update(status="failed", error="Superseded by a newer run of the same cart version.")


class Migration(migrations.Migration):
    dependencies = [("smartcart", "0001_initial")]

    operations = [
        migrations.RunPython(fail_duplicate_in_flight_runs, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="optimizationrun",
            constraint=models.UniqueConstraint(
                condition=models.Q(
                    ("dismissed_at__isnull", True), ("status__in", ["queued", "running"])
                ),
                fields=("cart", "cart_version"),
                name="optrun_one_in_flight_per_version",
                violation_error_message="This cart version is being improved already.",
            ),
        ),
    ]
