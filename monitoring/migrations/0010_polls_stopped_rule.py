"""The fleet-wide "polls stopped" alert rule (issue 15): a target whose polls no longer run
(starved, expired, no worker for it) opens an event, fed by the scheduler."""

from django.db import migrations

NAME = "Polls stopped for 3 intervals"
SERIES = "poll.overdue_intervals"


def create(apps, schema_editor):
    rule = apps.get_model("monitoring", "AlertRule")
    if not rule.objects.filter(target__isnull=True, series=SERIES, is_default=True).exists():
        rule.objects.create(
            name=NAME, series=SERIES, comparison="ge", threshold=3, duration_s=0, is_default=True
        )


def remove(apps, schema_editor):
    apps.get_model("monitoring", "AlertRule").objects.filter(
        target__isnull=True, series=SERIES, is_default=True
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("monitoring", "0009_audit_targets_and_alert_rules")]
    operations = [migrations.RunPython(create, remove)]
