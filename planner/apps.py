from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = _("Planner")

    def ready(self) -> None:
        from core.audit import register_snapshot_source
        from inventory.selectors import register_usage_finder
        from planner.models import Plan

        # A saved plan never changes: its creation is its whole audit history.
        register_snapshot_source(Plan, date_field="created_at", user_field="author_id")
        # Plans name their model by slug and re-run from it: deleting that spec would break them.
        register_usage_finder(_plans_using)


def _plans_using(obj: object) -> list[str]:
    from inventory.models import ModelSpec
    from planner.models import Plan

    if not isinstance(obj, ModelSpec):
        return []
    titles = Plan.objects.filter(model_slug=obj.slug).values_list("title", flat=True)[:20]
    return [f"plan: {title}" for title in titles]
