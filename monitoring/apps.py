from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MonitoringConfig(AppConfig):
    name = "monitoring"
    verbose_name = _("Monitoring")

    def ready(self) -> None:
        from core.opsmetrics import register_gauges
        from monitoring.ops_gauges import collect

        register_gauges(collect)
