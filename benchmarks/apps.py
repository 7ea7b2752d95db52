from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BenchmarksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks"
    verbose_name = _("Load benchmarks")
