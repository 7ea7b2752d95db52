"""Pages of the inventory app (under /inventory/)."""

from django.urls import path

from inventory.views import bulk, hardware, modelspecs, overview

app_name = "inventory"

urlpatterns = [
    path("", overview.InventoryIndexView.as_view(), name="index"),
    path("summary/", overview.FleetSummaryView.as_view(), name="fleet-summary"),
    # GPU types
    path("gpu-types/", hardware.GpuTypeListView.as_view(), name="gputype-list"),
    path("gpu-types/new/", hardware.GpuTypeFormView.as_view(), name="gputype-create"),
    path("gpu-types/<int:pk>/", hardware.GpuTypeDetailView.as_view(), name="gputype-detail"),
    path("gpu-types/<int:pk>/edit/", hardware.GpuTypeFormView.as_view(), name="gputype-update"),
    path("gpu-types/<int:pk>/delete/", hardware.GpuTypeDeleteView.as_view(), name="gputype-delete"),
    # Pools
    path("pools/", hardware.PoolListView.as_view(), name="pool-list"),
    path("pools/new/", hardware.PoolFormView.as_view(), name="pool-create"),
    path("pools/<int:pk>/", hardware.PoolDetailView.as_view(), name="pool-detail"),
    path("pools/<int:pk>/edit/", hardware.PoolFormView.as_view(), name="pool-update"),
    path("pools/<int:pk>/delete/", hardware.PoolDeleteView.as_view(), name="pool-delete"),
    # Machines
    path("machines/", hardware.MachineListView.as_view(), name="machine-list"),
    path("machines/new/", hardware.MachineFormView.as_view(), name="machine-create"),
    path("machines/import/", bulk.MachineImportView.as_view(), name="machine-import"),
    path(
        "machines/import/<uuid:token>/",
        bulk.MachineImportPreviewView.as_view(),
        name="machine-import-preview",
    ),
    path("machines/export/<str:fmt>/", bulk.MachineExportView.as_view(), name="machine-export"),
    path("machines/demo/remove/", hardware.DemoRemoveView.as_view(), name="demo-remove"),
    path("machines/<int:pk>/", hardware.MachineDetailView.as_view(), name="machine-detail"),
    path("machines/<int:pk>/edit/", hardware.MachineFormView.as_view(), name="machine-update"),
    path("machines/<int:pk>/delete/", hardware.MachineDeleteView.as_view(), name="machine-delete"),
    # Model specs
    path("models/", modelspecs.ModelSpecListView.as_view(), name="modelspec-list"),
    path("models/new/", modelspecs.ModelSpecFormView.as_view(), name="modelspec-create"),
    path("models/import/", modelspecs.ModelSpecImportView.as_view(), name="modelspec-import"),
    path("models/<int:pk>/", modelspecs.ModelSpecDetailView.as_view(), name="modelspec-detail"),
    path("models/<int:pk>/edit/", modelspecs.ModelSpecFormView.as_view(), name="modelspec-update"),
    path(
        "models/<int:pk>/delete/",
        modelspecs.ModelSpecDeleteView.as_view(),
        name="modelspec-delete",
    ),
]
