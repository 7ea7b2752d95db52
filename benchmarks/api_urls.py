from rest_framework.routers import DefaultRouter

from benchmarks.api import BenchmarkRunViewSet

router = DefaultRouter()
router.register("", BenchmarkRunViewSet, basename="benchmark")

urlpatterns = router.urls
