"""Root URLconf: pages per app, the versioned API, health and docs."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from core import api as core_api
from core import views as core_views

api_v1 = [
    path("", core_api.ApiRootView.as_view(), name="api-root"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("inventory/", include("inventory.api_urls")),
    path("", include("planner.api_urls")),
    path("decisions/", include("planner.decisions.api_urls")),
    path("monitoring/", include("monitoring.api_urls")),
    path("benchmarks/", include("benchmarks.api_urls")),
]

urlpatterns = [
    path("", include("core.urls")),
    path("inventory/", include("inventory.urls")),
    path("", include("planner.urls")),
    path("decisions/", include("planner.decisions.urls")),
    path("monitoring/", include("monitoring.urls")),
    path("benchmarks/", include("benchmarks.urls")),
    path("api/v1/", include(api_v1)),
    path("admin/", admin.site.urls),
    path("i18n/setlang/", core_views.set_language, name="set_language"),
]
