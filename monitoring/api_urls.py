"""REST API routes of the monitoring app (under /api/v1/monitoring/)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from monitoring.api import calibration, views

app_name = "monitoring-api"

router = DefaultRouter(trailing_slash=True)
router.register("targets", views.TargetViewSet, basename="target")
router.register("alert-rules", views.AlertRuleViewSet, basename="alert-rule")
router.register("events", views.AlertEventViewSet, basename="event")
router.register(
    "calibration-profiles", calibration.CalibrationProfileViewSet, basename="calibration-profile"
)

urlpatterns = [
    path("overview/", views.OverviewView.as_view(), name="overview"),
    path("fleet-series/", views.FleetSeriesView.as_view(), name="fleet-series"),
    *router.urls,
]
