from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = _("ServePlan core")

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from core.middleware import remember_language_at_login
        from core.roles import sync_group_permissions

        # Model permissions exist only after every app migrated, so the groups (created by a data
        # migration) receive theirs here; idempotent.
        post_migrate.connect(sync_group_permissions, dispatch_uid="core.sync_group_permissions")
        user_logged_in.connect(remember_language_at_login, dispatch_uid="core.language_at_login")
