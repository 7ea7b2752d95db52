from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = _("Planner")

    def ready(self) -> None:
        from core.audit import register_snapshot_source
        from planner.models import Plan

        # A saved plan never changes: its creation is its whole audit history.
        register_snapshot_source(Plan, date_field="created_at", user_field="author_id")
