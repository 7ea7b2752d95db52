"""The default "Ray node lost" rule (issue 16) for Ray targets created before it existed;
new targets get it from monitoring.targets.kinds."""

from django.db import migrations

NAME = "Ray node lost (fewer nodes than the inventory or plan expects)"
SERIES = "ray.cluster.nodes_missing"


def create(apps, schema_editor):
    target_model = apps.get_model("monitoring", "Target")
    rule_model = apps.get_model("monitoring", "AlertRule")
    have = set(
        rule_model.objects.filter(series=SERIES, is_default=True).values_list(
            "target_id", flat=True
        )
    )
    rule_model.objects.bulk_create(
        rule_model(
            target_id=pk,
            name=NAME,
            series=SERIES,
            comparison="gt",
            threshold=0,
            duration_s=0,
            is_default=True,
        )
        for pk in target_model.objects.filter(kind="ray").values_list("pk", flat=True)
        if pk not in have
    )


def remove(apps, schema_editor):
    apps.get_model("monitoring", "AlertRule").objects.filter(
        series=SERIES, is_default=True
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("monitoring", "0011_target_sample_limit")]
    operations = [migrations.RunPython(create, remove)]
