"""REST API routes of the planner app (under /api/v1/)."""

from django.urls import path
from rest_framework.routers import DefaultRouter

from planner.api.views import EvaluateView, PlanViewSet, PoolPlanViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("plans", PlanViewSet, basename="plan")
router.register("pool-plans", PoolPlanViewSet, basename="pool-plan")

urlpatterns = [
    path("plans/evaluate/", EvaluateView.as_view(), name="plan-evaluate"),
    *router.urls,
]
