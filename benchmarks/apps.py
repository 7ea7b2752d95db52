from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class BenchmarksConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "benchmarks"
    verbose_name = _("Load benchmarks")

    def ready(self) -> None:
        from benchmarks.marks import benchmark_marks
        from monitoring.time_marks import register_time_marks

        # The target's dashboards shade each benchmark's span.
        register_time_marks(benchmark_marks)
