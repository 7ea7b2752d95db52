"""Bulk machine import/export: preview with per-row, per-field errors; all-or-nothing."""

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from inventory import bulk
from inventory.models import Machine, MachineImportBatch, NetworkInterface, Pool
from inventory.selectors import machine_queryset
from tests.inventory.factories import GpuTypeFactory, MachineFactory, PoolFactory

pytestmark = pytest.mark.django_db

HEADER = ",".join(bulk.CSV_COLUMNS)


def csv_line(
    hostname, gpu="a800-80g-sxm", count="8", pool="prod", nics="eth1 25 ethernet data", **extra
):
    values = {
        "hostname": hostname,
        "gpu_type": gpu,
        "gpu_count": count,
        "interconnect": "nvlink",
        "pool": pool,
        "status": "active",
        "nics": nics,
        **extra,
    }
    out = io.StringIO()
    csv.DictWriter(out, fieldnames=bulk.CSV_COLUMNS, lineterminator="\n").writerow(values)
    return out.getvalue()


def make_csv(*lines):
    return (HEADER + "\n" + "".join(lines)).encode()


@pytest.fixture
def gpus():
    return GpuTypeFactory(a800=True), GpuTypeFactory(a100=True)


def upload(client, content, name="fleet.csv", **extra):
    return client.post(
        reverse("inventory:machine-import"),
        {"file": SimpleUploadedFile(name, content), **extra},
    )


def test_parse_nics_cell_defaults_kind_and_role():
    assert bulk.parse_nics_cell("eth1 25; eno1 1 ethernet management") == [
        {"name": "eth1", "speed_gbps": "25"},
        {"name": "eno1", "speed_gbps": "1", "kind": "ethernet", "role": "management"},
    ]


def test_upload_preview_confirm_imports_everything(planner_client, planner, gpus):
    content = make_csv(
        csv_line("gpu-01", nics="eth1 25 ethernet data; eno1 1 ethernet management"),
        csv_line("gpu-02", gpu="a100-80g-sxm", count="4", pool="shared"),
    )

    response = upload(planner_client, content)

    assert response.status_code == 302
    batch = MachineImportBatch.objects.get()
    assert response["Location"] == reverse("inventory:machine-import-preview", args=[batch.token])
    preview = planner_client.get(response["Location"])
    assert preview.status_code == 200
    assert b"Confirm import" in preview.content
    assert not Machine.objects.exists()  # nothing written before confirmation

    done = planner_client.post(response["Location"])

    assert done.status_code == 302
    assert Machine.objects.count() == 2
    assert set(Pool.objects.values_list("name", flat=True)) == {"prod", "shared"}
    assert Machine.objects.get(hostname="gpu-01").nics.count() == 2
    assert Machine.objects.get(hostname="gpu-02").history.get().history_user == planner
    batch.refresh_from_db()
    assert batch.applied_at is not None
    assert planner_client.post(response["Location"]).status_code == 404  # not twice


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        (csv_line("gpu-09", count="0"), "gpu_count", "GPU count must be between 1 and 64."),
        (csv_line("gpu-09", count="65"), "gpu_count", "GPU count must be between 1 and 64."),
        (csv_line("gpu-09", count="eight"), "gpu_count", "Enter a whole number."),
        (csv_line("gpu-01"), "hostname", "Duplicate hostname gpu-01: also on row 1"),
        (csv_line("existing"), "hostname", "already exists"),
        (csv_line("bad_host"), "hostname", "RFC 1123"),
        (csv_line("gpu-09", gpu="h999"), "gpu_type", "Unknown GPU type 'h999'"),
        (
            csv_line("gpu-09", nics="eth1 0 ethernet data"),
            "nics",
            "Interface 1 (eth1) speed_gbps: NIC speed (Gb/s) must be greater than 0 (got 0).",
        ),
        (
            csv_line("gpu-09", nics="eth1 fast"),
            "nics",
            "Interface 1 (eth1) speed_gbps: “fast” value must be a float.",
        ),
        (
            csv_line("gpu-09", nics="eth1 25; eth1 100"),
            "nics",
            "the name eth1 is used twice",
        ),
        (
            csv_line("gpu-09", nics="eth1 25 carrier-pigeon data"),
            "nics",
            "Interface 1 (eth1) kind: Value 'carrier-pigeon' is not a valid choice.",
        ),
    ],
    ids=[
        "gpu-count-0",
        "gpu-count-65",
        "gpu-count-text",
        "duplicate-hostname-in-file",
        "hostname-exists",
        "bad-hostname",
        "unknown-gpu",
        "nic-speed-0",
        "nic-speed-text",
        "duplicate-nic",
        "bad-nic-kind",
    ],
)
def test_one_bad_row_is_reported_on_its_field_and_nothing_is_imported(
    planner_client, gpus, line, field, message
):
    MachineFactory(hostname="existing", gpu_type=gpus[0])
    content = make_csv(csv_line("gpu-01"), line, csv_line("gpu-03"))

    response = upload(planner_client, content)
    preview_url = response["Location"]
    page = planner_client.get(preview_url)

    table = page.context["table"]
    bad = table[1]
    assert not bad["row"].ok
    assert any(message in error for error in bad["row"].errors[field])
    assert table[0]["row"].ok
    assert b"Confirm import" not in page.content
    assert b"cell-error" in page.content

    confirm = planner_client.post(preview_url)

    assert confirm.status_code == 400
    assert b"nothing was imported" in confirm.content
    assert Machine.objects.count() == 1  # only the pre-existing one


def test_update_existing_changes_machines_matched_by_hostname(planner_client, gpus):
    MachineFactory(hostname="gpu-01", gpu_type=gpus[0], gpu_count=8)
    content = make_csv(csv_line("gpu-01", count="4", nics="ib0 200 infiniband data"))

    response = upload(planner_client, content, update_existing="on")
    page = planner_client.get(response["Location"])
    planner_client.post(response["Location"])

    assert page.context["table"][0]["row"].action == "update"
    machine = Machine.objects.get(hostname="gpu-01")
    assert machine.gpu_count == 4
    assert list(machine.nics.values_list("name", flat=True)) == ["ib0"]


@pytest.mark.parametrize(
    ("content", "name", "needle"),
    [
        (b"", "empty.csv", "empty"),
        (b"\n", "blank.csv", "header row"),
        (b"hostname,colour\nx,red\n", "x.csv", "Unknown CSV columns: colour"),
        (b"machines: [unclosed", "x.yaml", "not valid YAML"),
        (b"just: a mapping", "x.yaml", "must hold a list"),
        (HEADER.encode() + b"\n", "x.csv", "holds no machines"),
        (b"\xff\xfe\x00", "x.csv", "not UTF-8"),
    ],
    ids=["empty", "blank", "unknown-column", "bad-yaml", "yaml-not-list", "no-rows", "binary"],
)
def test_unreadable_files_are_refused_on_the_file_field(planner_client, content, name, needle):
    response = upload(planner_client, content, name=name)

    assert response.status_code == 400
    assert any(needle in error for error in response.context["form"].errors["file"])
    assert not MachineImportBatch.objects.exists()


def test_unknown_extension_asks_for_the_format(planner_client):
    response = upload(planner_client, b"x", name="fleet.txt")

    assert response.status_code == 400
    assert "file_format" in response.context["form"].errors


def test_yaml_import(planner_client, gpus):
    content = b"""
machines:
  - hostname: yaml-01
    gpu_type: a800-80g-sxm
    gpu_count: 8
    interconnect: nvlink
    tags: [prod, a800]
    nics:
      - {name: eth1, speed_gbps: 25, kind: roce, role: data}
  - hostname: yaml-02
    gpu_type: a100-80g-sxm
    gpu_count: 4
    interconnect: nvswitch
    nics: []
"""
    response = upload(planner_client, content, name="fleet.yaml")
    planner_client.post(response["Location"])

    machine = Machine.objects.get(hostname="yaml-01")
    assert machine.tags == "prod,a800"
    assert machine.nics.get().kind == "roce"
    assert Machine.objects.get(hostname="yaml-02").nics.count() == 0


def test_yaml_row_errors_are_per_row(planner_client, gpus):
    content = b"""
- hostname: ok-01
  gpu_type: a800-80g-sxm
  gpu_count: 8
  interconnect: nvlink
- hostname: bad-01
  gpu_type: a800-80g-sxm
  gpu_count: 99
  interconnect: nvlink
  nics: {name: eth1}
- just a string
"""
    response = upload(planner_client, content, name="fleet.yml")
    table = planner_client.get(response["Location"]).context["table"]

    assert table[0]["row"].ok
    assert table[1]["row"].errors["gpu_count"] == ["GPU count must be between 1 and 64."]
    assert "nics must be a list" in table[1]["row"].errors["nics"][0]
    assert table[2]["general"]


def test_viewer_cannot_import(viewer_client, planner_client, gpus):
    response = upload(planner_client, make_csv(csv_line("gpu-01")))
    preview_url = response["Location"]

    assert upload(viewer_client, make_csv(csv_line("gpu-02"))).status_code == 403
    assert viewer_client.get(preview_url).status_code == 403
    assert viewer_client.post(preview_url).status_code == 403
    assert not Machine.objects.exists()


def snapshot():
    rows = []
    for m in machine_queryset().order_by("hostname"):
        rows.append(
            (
                m.hostname,
                m.management_address,
                m.datacenter,
                m.rack,
                m.pool.name if m.pool else None,
                m.gpu_type.slug,
                m.gpu_count,
                m.interconnect,
                m.cpu_cores,
                m.ram_gib,
                m.status,
                m.owner_team,
                m.tags,
                m.notes,
                sorted((n.name, n.speed_gbps, n.kind, n.role) for n in m.nics.all()),
            )
        )
    return rows


def varied_fleet(gpus):
    prod = PoolFactory(name="prod")
    MachineFactory(hostname="a-01", gpu_type=gpus[0], pool=prod, tags="prod,a800", notes="x, y")
    MachineFactory(
        hostname="b-01",
        gpu_type=gpus[1],
        gpu_count=4,
        pool=None,
        cpu_cores=None,
        ram_gib=None,
        status="maintenance",
        management_address="fd00::1",
        notes='quoted "notes"\nsecond line',
        nics=[
            {"name": "ib0", "speed_gbps": 200, "kind": "infiniband", "role": "data"},
            {"name": "ens3f0", "speed_gbps": 2.5, "kind": "ethernet", "role": "data"},
        ],
    )
    MachineFactory(hostname="c-01", gpu_type=gpus[0], gpu_count=1, nics=[], rack="")


@pytest.mark.parametrize("fmt", ["csv", "yaml"])
def test_export_reimports_to_the_same_data(planner_client, gpus, fmt):
    varied_fleet(gpus)
    before = snapshot()
    exported = planner_client.get(reverse("inventory:machine-export", args=[fmt]))
    assert exported.status_code == 200
    assert "attachment" in exported["Content-Disposition"]
    NetworkInterface.objects.all().delete()
    Machine.objects.all().delete()
    Pool.objects.all().delete()

    response = upload(planner_client, exported.content, name=f"export.{fmt}")
    confirm = planner_client.post(response["Location"])

    assert confirm.status_code == 302
    assert snapshot() == before


def test_export_respects_list_filters(viewer_client, gpus):
    varied_fleet(gpus)

    body = viewer_client.get(
        reverse("inventory:machine-export", args=["csv"]), {"status": "maintenance"}
    ).content.decode()

    assert [row["hostname"] for row in bulk.parse_csv(body)] == ["b-01"]


def test_a_200_machine_csv_imports_in_one_go(planner_client, gpus):
    lines = [
        csv_line(
            f"node-{i:03d}",
            gpu=("a800-80g-sxm", "a100-80g-sxm")[i % 2],
            pool=f"pool-{i % 4}",
            nics=f"eth1 25 ethernet data; eno1 1 ethernet management; ib0 {100 + i % 2 * 100} "
            "infiniband data",
        )
        for i in range(200)
    ]
    response = upload(planner_client, make_csv(*lines))
    preview = planner_client.get(response["Location"])
    assert preview.context["preview"].ok

    confirm = planner_client.post(response["Location"])

    assert confirm.status_code == 302
    assert confirm["Location"] == reverse("inventory:fleet-summary")
    assert Machine.objects.count() == 200
    assert NetworkInterface.objects.count() == 600
    summary = planner_client.get(confirm["Location"])
    assert summary.context["summary"].gpus == 1600


def test_unconfirmed_uploads_are_forgotten_after_a_day(planner_client, gpus):
    from datetime import timedelta

    from django.utils import timezone

    old = MachineImportBatch.objects.create(file_format="csv", rows=[])
    MachineImportBatch.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(days=2)
    )

    upload(planner_client, make_csv(csv_line("gpu-01")))

    assert not MachineImportBatch.objects.filter(pk=old.pk).exists()
    assert MachineImportBatch.objects.count() == 1
