from django.db import migrations


class Migration(migrations.Migration):
    """Rename DecisionRecord.decision to decision_text: `decision` is every service's argument."""

    dependencies = [
        ("decisions", "0001_initial"),
    ]

    operations = [
        migrations.RenameField(
            model_name="decisionrecord", old_name="decision", new_name="decision_text"
        ),
        migrations.RenameField(
            model_name="historicaldecisionrecord", old_name="decision", new_name="decision_text"
        ),
    ]
