"""Pages of the planner app."""

from django.urls import path

from planner.views import plans, pools, wizard

app_name = "planner"

urlpatterns = [
    path("plans/", plans.PlanListView.as_view(), name="plan-list"),
    path("plans/new/", wizard.WizardStartView.as_view(), name="wizard-start"),
    path("plans/new/<slug:step>/", wizard.WizardStepView.as_view(), name="wizard-step"),
    path(
        "plans/new/<slug:step>/preview/", wizard.WizardPreviewView.as_view(), name="wizard-preview"
    ),
    path("plans/compare/", plans.PlanCompareView.as_view(), name="plan-compare"),
    path("plans/rules/", plans.RulesView.as_view(), name="rules"),
    path("plans/pools/", pools.PoolPlanListView.as_view(), name="pool-plan-list"),
    path("plans/pools/new/", pools.PoolWizardView.as_view(), name="pool-wizard"),
    path(
        "plans/pools/<uuid:public_id>/",
        pools.PoolPlanDetailView.as_view(),
        name="pool-plan-detail",
    ),
    path(
        "plans/pools/<uuid:public_id>/what-if/",
        pools.PoolWhatIfView.as_view(),
        name="pool-plan-what-if",
    ),
    path(
        "plans/pools/<uuid:public_id>/bundle.zip",
        pools.PoolPlanBundleView.as_view(),
        name="pool-plan-bundle",
    ),
    path("plans/<uuid:public_id>/", plans.PlanDetailView.as_view(), name="plan-detail"),
    path("plans/<uuid:public_id>/what-if/", plans.PlanWhatIfView.as_view(), name="plan-what-if"),
    path("plans/<uuid:public_id>/rerun/", plans.PlanRerunView.as_view(), name="plan-rerun"),
    path(
        "plans/<uuid:public_id>/export.<str:fmt>",
        plans.PlanExportView.as_view(),
        name="plan-export",
    ),
]
