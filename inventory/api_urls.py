"""REST API routes of the inventory app (under /api/v1/inventory/)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from inventory.api import views

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("gpu-types", views.GpuTypeViewSet, basename="gputype")
router.register("pools", views.PoolViewSet, basename="pool")
router.register("machines", views.MachineViewSet, basename="machine")
router.register("nics", views.NetworkInterfaceViewSet, basename="nic")
router.register("model-specs", views.ModelSpecViewSet, basename="modelspec")

urlpatterns = [
    path("fleet-summary/", views.FleetSummaryView.as_view(), name="inventory-fleet-summary"),
    *router.urls,
]
