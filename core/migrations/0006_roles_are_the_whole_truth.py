"""Make the staff and superuser flags follow each user's role (issue 33 item 5).

Before, a role change moved the user between groups only: a superuser given the viewer role kept
its flags, and with them users, audit and /admin/. Admins are staff; anyone with another role is
neither staff nor superuser. Accounts without any role keep their flags (createsuperuser's).
"""

from django.conf import settings
from django.db import migrations

ROLES = ("viewer", "planner", "admin")


def flags_follow_roles(apps, schema_editor):
    users = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    admins = users.objects.filter(groups__name="admin")
    admins.update(is_staff=True)
    others = users.objects.filter(groups__name__in=ROLES).exclude(pk__in=admins.values("pk"))
    users.objects.filter(pk__in=list(others.values_list("pk", flat=True))).update(
        is_staff=False, is_superuser=False
    )


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0005_audit_users_tokens_and_password_change"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunPython(flags_follow_roles, migrations.RunPython.noop)]
