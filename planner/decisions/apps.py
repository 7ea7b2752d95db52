from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DecisionsConfig(AppConfig):
    """Decision records live inside planner but keep their own migrations (label "decisions")."""

    name = "planner.decisions"
    label = "decisions"
    verbose_name = _("Decision records")
