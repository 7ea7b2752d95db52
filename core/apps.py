from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = _("ServePlan core")

    def ready(self) -> None:
        from core.roles import sync_group_permissions

        # Model permissions exist only after every app migrated, so the groups (created by a data
        # migration) receive theirs here; idempotent.
        post_migrate.connect(sync_group_permissions, dispatch_uid="core.sync_group_permissions")
