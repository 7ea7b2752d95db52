from django.apps import AppConfig
from django.db.models.signals import post_migrate
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = _("ServePlan core")

    def ready(self) -> None:
        from django.contrib.auth import get_user_model
        from django.contrib.auth.signals import user_logged_in, user_login_failed
        from django.db.models.signals import post_save

        from core import accounts, login_guard
        from core.middleware import remember_language_at_login
        from core.roles import sync_group_permissions

        # Model permissions exist only after every app migrated, so the groups (created by a data
        # migration) receive theirs here; idempotent.
        post_migrate.connect(sync_group_permissions, dispatch_uid="core.sync_group_permissions")
        user_logged_in.connect(remember_language_at_login, dispatch_uid="core.language_at_login")
        # Users are audited (simple_history): Django's last_login save would add a history row
        # per sign-in, so the time is written with a queryset update instead (core.accounts).
        user_logged_in.disconnect(dispatch_uid="update_last_login")
        user_logged_in.connect(accounts.record_last_login, dispatch_uid="core.last_login")
        user_logged_in.connect(
            accounts.flag_password_change_at_login, dispatch_uid="core.must_change_password"
        )
        user_login_failed.connect(login_guard.record_failure, dispatch_uid="core.login_guard")
        post_save.connect(
            accounts.revoke_tokens_on_password_save,
            sender=get_user_model(),
            dispatch_uid="core.revoke_tokens_on_password",
        )
