from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PlannerConfig(AppConfig):
    name = "planner"
    verbose_name = _("Planner")

    def ready(self) -> None:
        from core.audit import register_snapshot_source
        from core.warmup import register_warm_up
        from inventory.selectors import register_usage_finder
        from planner.engine.result import validator
        from planner.models import Plan

        # A saved plan never changes: its creation is its whole audit history.
        register_snapshot_source(Plan, date_field="created_at", user_field="author_id")
        # Plans name their model by slug and re-run from it: deleting that spec would break them.
        register_usage_finder(_plans_using)
        # The plan page is the most read: its validator and templates are built at start.
        register_warm_up(
            call=validator, templates=("planner/plan_detail.html", "planner/partials/result.html")
        )


def _plans_using(obj: object) -> list[str]:
    """Name the saved plans that would break (no re-run) if `obj` were deleted.

    Plans name their model by slug, the machines they ran on by hostname and their pool by
    name or id: each of those stays until no plan refers to it (retire a machine instead).
    """
    from django.db.models import Q
    from django.utils.translation import gettext as _

    from inventory.models import Machine, ModelSpec, Pool
    from planner.models import Plan

    limit = 20
    if isinstance(obj, ModelSpec):
        titles = list(
            Plan.objects.filter(model_slug=obj.slug).values_list("title", flat=True)[:limit]
        )
    elif isinstance(obj, Pool):
        named = Q(spec__hardware__pool=obj.name) | Q(spec__hardware__pool=obj.pk)
        titles = list(Plan.objects.filter(named).values_list("title", flat=True)[:limit])
    elif isinstance(obj, Machine):
        titles = list(Plan.objects.on_host(obj.hostname).values_list("title", flat=True)[:limit])
    else:
        return []
    return [_("plan: %(title)s") % {"title": title} for title in titles]
