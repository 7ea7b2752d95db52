from django.db import migrations


class Migration(migrations.Migration):
    """Rename EvidenceItem.source to value_source: the audit log annotates rows with "source"."""

    dependencies = [
        ("decisions", "0002_decision_text"),
    ]

    operations = [
        migrations.RenameField(
            model_name="evidenceitem", old_name="source", new_name="value_source"
        ),
        migrations.RenameField(
            model_name="historicalevidenceitem", old_name="source", new_name="value_source"
        ),
    ]
