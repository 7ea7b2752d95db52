"""Pages of the core app: home, login/logout, health."""

from django.contrib.auth import views as auth_views
from django.urls import path

from core import account_views, audit_views, user_views, views

urlpatterns = [
    path("", views.HomeView.as_view(), name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("metrics", views.ops_metrics, name="ops-metrics"),
    path("accounts/login/", account_views.GuardedLoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/", account_views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        account_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(
            template_name="registration/password_reset_complete.html"
        ),
        name="password_reset_complete",
    ),
    path("accounts/users/", user_views.user_list, name="user-list"),
    path("accounts/users/<int:pk>/", user_views.user_detail, name="user-detail"),
    path("accounts/users/<int:pk>/reset-link/", user_views.reset_link, name="user-reset-link"),
    path("accounts/tokens/", account_views.tokens, name="account-tokens"),
    path("audit/", audit_views.audit_log, name="audit-log"),
    path("audit.csv", audit_views.audit_log_csv, name="audit-log-csv"),
    path(
        "accounts/tokens/<int:pk>/revoke/",
        account_views.revoke_token,
        name="account-token-revoke",
    ),
]
