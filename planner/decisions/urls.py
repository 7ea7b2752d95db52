"""Pages of decision records (mounted at /decisions/)."""

from django.urls import path

from planner.decisions import views

app_name = "decisions"

urlpatterns = [
    path("", views.DecisionListView.as_view(), name="list"),
    path("new/", views.DecisionCreateView.as_view(), name="create"),
    path(
        "new/from-plan/<uuid:public_id>/",
        views.DecisionCreateFromPlanView.as_view(),
        name="create-from-plan",
    ),
    path(
        "new/from-pool-plan/<uuid:public_id>/",
        views.DecisionCreateFromPoolPlanView.as_view(),
        name="create-from-pool-plan",
    ),
    path("<int:number>/", views.DecisionDetailView.as_view(), name="detail"),
    path("<int:number>/edit/", views.DecisionEditView.as_view(), name="edit"),
    path("<int:number>/accept/", views.DecisionAcceptView.as_view(), name="accept"),
    path("<int:number>/reject/", views.DecisionRejectView.as_view(), name="reject"),
    path("<int:number>/supersede/", views.DecisionSupersedeView.as_view(), name="supersede"),
    path("<int:number>/successor/", views.DecisionSuccessorView.as_view(), name="successor"),
    path("<int:number>/revisions/", views.DecisionRevisionsView.as_view(), name="revisions"),
    path("<int:number>/diff/", views.DecisionDiffView.as_view(), name="diff"),
    path("<int:number>/print/", views.DecisionPrintView.as_view(), name="print"),
    path("<int:number>/export.md", views.DecisionExportView.as_view(), name="export-markdown"),
]
