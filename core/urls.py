"""Pages of the core app: home, login/logout, health."""

from django.contrib.auth import views as auth_views
from django.urls import path

from core import account_views, audit_views, views

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("metrics", views.ops_metrics, name="ops-metrics"),
    path("vendor/plotly.min.js", views.plotly_js, name="plotly-js"),
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/tokens/", account_views.tokens, name="account-tokens"),
    path("audit/", audit_views.audit_log, name="audit-log"),
    path("audit.csv", audit_views.audit_log_csv, name="audit-log-csv"),
    path(
        "accounts/tokens/<int:pk>/revoke/",
        account_views.revoke_token,
        name="account-token-revoke",
    ),
]
