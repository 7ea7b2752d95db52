from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MonitoringConfig(AppConfig):
    name = "monitoring"
    verbose_name = _("Monitoring")

    def ready(self) -> None:
        from core.health import register_section
        from core.opsmetrics import register_gauges
        from core.warmup import register_warm_up
        from monitoring.ops_gauges import collect
        from monitoring.selectors import polling_section

        register_gauges(collect)
        register_warm_up(templates=("monitoring/overview.html", "monitoring/target_detail.html"))
        register_section("polling", polling_section)
