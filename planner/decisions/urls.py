"""Pages of decision records (mounted at /decisions/)."""

from django.urls import path  # noqa: F401

app_name = "decisions"

urlpatterns: list = []
