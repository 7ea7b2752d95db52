"""The inventory landing page and the fleet summary."""

from typing import Any

from django.views.generic import TemplateView

from inventory import selectors
from inventory.models import GpuType, Machine, ModelSpec, Pool


class InventoryIndexView(TemplateView):
    template_name = "inventory/index.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["counts"] = {
            "machines": Machine.objects.count(),
            "pools": Pool.objects.count(),
            "gpu_types": GpuType.objects.count(),
            "model_specs": ModelSpec.objects.count(),
        }
        return context


class FleetSummaryView(TemplateView):
    template_name = "inventory/fleet_summary.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["summary"] = selectors.fleet_summary()
        return context
