"""Pages of the monitoring app."""

from django.urls import path

from monitoring.views import allowlist, calibration, pages, reality

app_name = "monitoring"

urlpatterns = [
    path("", pages.OverviewView.as_view(), name="overview"),
    path("overview/tiles/", pages.OverviewTilesView.as_view(), name="overview-tiles"),
    path("machines/", pages.MachinesView.as_view(), name="machines"),
    path("machines/grid/", pages.MachinesGridView.as_view(), name="machines-grid"),
    path("machines/register/", pages.MachinesRegisterView.as_view(), name="machines-register"),
    path("targets/", pages.TargetListView.as_view(), name="target-list"),
    path("targets/new/", pages.TargetFormView.as_view(), name="target-create"),
    path("targets/<int:pk>/", pages.TargetDetailView.as_view(), name="target-detail"),
    path("targets/<int:pk>/edit/", pages.TargetFormView.as_view(), name="target-edit"),
    path("targets/<int:pk>/delete/", pages.TargetDeleteView.as_view(), name="target-delete"),
    path("targets/<int:pk>/panels/", pages.TargetPanelsView.as_view(), name="target-panels"),
    path("targets/<int:pk>/evidence/", pages.TargetEvidenceView.as_view(), name="target-evidence"),
    path("events/", pages.EventListView.as_view(), name="event-list"),
    path("plans/<uuid:public_id>/reality/", reality.PlanRealityView.as_view(), name="plan-reality"),
    path(
        "pool-plans/<uuid:public_id>/reality/",
        reality.PoolPlanRealityView.as_view(),
        name="pool-plan-reality",
    ),
    path(
        "decisions/<int:number>/reality/",
        reality.DecisionRealityView.as_view(),
        name="decision-reality",
    ),
    path("allowlist/", allowlist.AllowlistView.as_view(), name="allowlist"),
    path(
        "allowlist/<int:pk>/delete/",
        allowlist.AllowlistEntryDeleteView.as_view(),
        name="allowlist-delete",
    ),
    path("allowlist/jobs/", allowlist.AllowedJobCreateView.as_view(), name="allowed-job-create"),
    path(
        "allowlist/jobs/<int:pk>/delete/",
        allowlist.AllowedJobDeleteView.as_view(),
        name="allowed-job-delete",
    ),
    path("calibration/", calibration.CalibrationListView.as_view(), name="calibration-list"),
    path("calibration/fit/", calibration.CalibrationFitView.as_view(), name="calibration-fit"),
    path(
        "calibration/<uuid:public_id>/",
        calibration.CalibrationDetailView.as_view(),
        name="calibration-detail",
    ),
    path(
        "calibration/<uuid:public_id>/plan/",
        calibration.CalibrationReplanView.as_view(),
        name="calibration-replan",
    ),
]
