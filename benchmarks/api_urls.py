from rest_framework.routers import DefaultRouter

from benchmarks.api import BenchmarkRunViewSet

router = DefaultRouter()
router.include_root_view = False  # the API root is /api/v1/; one view may be named api-root
router.register("", BenchmarkRunViewSet, basename="benchmark")

urlpatterns = router.urls
