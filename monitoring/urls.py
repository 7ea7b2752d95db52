"""Pages of the monitoring app."""

from django.urls import path  # noqa: F401

app_name = "monitoring"

urlpatterns: list = []
