"""Pages of the inventory app."""

from django.urls import path  # noqa: F401

app_name = "inventory"

urlpatterns: list = []
