"""Pages of the planner app."""

from django.urls import path  # noqa: F401

app_name = "planner"

urlpatterns: list = []
