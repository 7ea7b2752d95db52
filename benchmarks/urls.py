from django.urls import path

from benchmarks import views

app_name = "benchmarks"

urlpatterns = [
    path("", views.RunListView.as_view(), name="list"),
    path("<uuid:public_id>/", views.RunDetailView.as_view(), name="detail"),
    path("<uuid:public_id>/progress/", views.RunProgressView.as_view(), name="progress"),
    path("<uuid:public_id>/cancel/", views.RunCancelView.as_view(), name="cancel"),
    path("<uuid:public_id>/calibrate/", views.RunCalibrateView.as_view(), name="calibrate"),
    path("<uuid:public_id>/evidence/", views.RunEvidenceView.as_view(), name="evidence"),
    path(
        "<uuid:public_id>/export.<str:fmt>",
        views.RunExportView.as_view(),
        name="export",
    ),
]
