"""Home, health, language, operator metrics and the favicon (the API root: core.api)."""

import hmac
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.templatetags.static import static
from django.utils import translation
from django.views import i18n as i18n_views
from django.views.decorators.http import require_GET, require_POST
from django.views.generic import TemplateView
from prometheus_client import CONTENT_TYPE_LATEST

from core import opsmetrics
from core.health import check_health
from core.middleware import SESSION_LANGUAGE_KEY
from core.models import UserPreference


@require_POST
@login_not_required
def set_language(request: HttpRequest) -> HttpResponse:
    """Switch the interface language and remember it for the signed-in user."""
    response = i18n_views.set_language(request)
    language = request.POST.get("language", "")
    if request.user.is_authenticated and translation.check_for_language(language):
        UserPreference.objects.update_or_create(user=request.user, defaults={"language": language})
        request.session[SESSION_LANGUAGE_KEY] = language
    return response


@login_not_required
@require_GET
def ops_metrics(request: HttpRequest) -> HttpResponse:
    """Serve ServePlan's own metrics as Prometheus text (bearer token when METRICS_TOKEN is set)."""
    expected = settings.METRICS_TOKEN
    if not expected and settings.METRICS_REQUIRE_TOKEN:
        return HttpResponse("set METRICS_TOKEN to serve /metrics (bearer token)\n", status=403)
    if expected:
        given = request.headers.get("Authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {expected}".encode()):
            return HttpResponse("missing or wrong bearer token\n", status=401)
    return HttpResponse(opsmetrics.render(), content_type=CONTENT_TYPE_LATEST)


@login_not_required
@require_GET
def favicon(request: HttpRequest) -> HttpResponse:
    """Send browsers that ask for /favicon.ico to the static icon."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


class HomeView(TemplateView):
    template_name = "core/home.html"


@login_not_required
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Answer 200 when the database, broker and worker are fine, 503 naming what is not;
    "degraded" (still 200) when polls run late or are missed."""
    health = check_health()
    status = "unhealthy" if not health.ok else "degraded" if health.degraded else "ok"
    body: dict[str, Any] = {
        "status": status,
        "database": health.database,
        "broker": health.broker,
        "worker_heartbeat_age_s": health.worker_heartbeat_age_s,
        **health.sections,
        "version": settings.SERVEPLAN_VERSION,
    }
    if not health.ok:
        body["problems"] = list(health.problems)
    if health.degraded:  # running but behind: 200, so a load balancer keeps the web up
        body["degraded"] = list(health.degraded)
    response = JsonResponse(body, status=200 if health.ok else 503)
    response["Cache-Control"] = "no-store"
    return response
