"""REST API routes of decision records (mounted at /api/v1/decisions/)."""

from rest_framework.routers import DefaultRouter

from planner.decisions.api.views import DecisionRecordViewSet

router = DefaultRouter(trailing_slash=True)
router.include_root_view = False
router.register("", DecisionRecordViewSet, basename="decision")

urlpatterns = router.urls
