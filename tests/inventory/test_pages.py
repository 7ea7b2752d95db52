"""Inventory pages: lists, details, forms, permissions, in-use deletes."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from inventory.models import GpuType, Machine, ModelSpec, NetworkInterface, Pool
from tests.inventory.conftest import catalog_config
from tests.inventory.factories import (
    GpuTypeFactory,
    MachineFactory,
    ModelSpecFactory,
    PoolFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet():
    a800 = GpuTypeFactory(a800=True)
    pool = PoolFactory(name="prod")
    machine = MachineFactory(hostname="a800-node-1", gpu_type=a800, pool=pool)
    spec = ModelSpecFactory(slug="llama-3.1-8b", name="Llama-3.1-8B")
    return {"gpu": a800, "pool": pool, "machine": machine, "spec": spec}


def detail_urls(fleet):
    return [
        reverse("inventory:machine-detail", args=[fleet["machine"].pk]),
        reverse("inventory:pool-detail", args=[fleet["pool"].pk]),
        reverse("inventory:gputype-detail", args=[fleet["gpu"].pk]),
        reverse("inventory:modelspec-detail", args=[fleet["spec"].pk]),
    ]


READ_PAGES = [
    "inventory:index",
    "inventory:fleet-summary",
    "inventory:machine-list",
    "inventory:pool-list",
    "inventory:gputype-list",
    "inventory:modelspec-list",
]
WRITE_PAGES = [
    "inventory:machine-create",
    "inventory:machine-import",
    "inventory:pool-create",
    "inventory:gputype-create",
    "inventory:modelspec-create",
    "inventory:modelspec-import",
]


@pytest.mark.parametrize("name", READ_PAGES)
def test_viewer_reads_every_page(viewer_client, fleet, name):
    response = viewer_client.get(reverse(name))

    assert response.status_code == 200


def test_viewer_reads_detail_pages_without_write_buttons(viewer_client, fleet):
    for url in detail_urls(fleet):
        response = viewer_client.get(url)
        assert response.status_code == 200
        assert b"/edit/" not in response.content
        assert b"/delete/" not in response.content


def test_planner_sees_write_buttons(planner_client, fleet):
    response = planner_client.get(detail_urls(fleet)[0])

    assert b"/edit/" in response.content
    assert b"/delete/" in response.content


def test_viewer_list_has_no_add_button(viewer_client, fleet):
    content = viewer_client.get(reverse("inventory:machine-list")).content

    assert reverse("inventory:machine-create").encode() not in content


@pytest.mark.parametrize("name", WRITE_PAGES)
def test_viewer_gets_403_on_write_pages(viewer_client, name):
    assert viewer_client.get(reverse(name)).status_code == 403
    assert viewer_client.post(reverse(name), {}).status_code == 403


def test_viewer_gets_403_on_edit_and_delete(viewer_client, fleet):
    machine = fleet["machine"]
    for name in ("inventory:machine-update", "inventory:machine-delete"):
        url = reverse(name, args=[machine.pk])
        assert viewer_client.get(url).status_code == 403
        assert viewer_client.post(url).status_code == 403
    assert Machine.objects.filter(pk=machine.pk).exists()


@pytest.mark.parametrize("name", READ_PAGES + WRITE_PAGES)
def test_anonymous_is_redirected_to_login(client, name):
    response = client.get(reverse(name))

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_index_links_every_section(viewer_client):
    content = viewer_client.get(reverse("inventory:index")).content.decode()

    for name in READ_PAGES[1:]:
        assert reverse(name) in content


def test_machine_list_search_filter_and_sort(viewer_client):
    a800 = GpuTypeFactory(a800=True)
    a100 = GpuTypeFactory(a100=True)
    MachineFactory(hostname="alpha", gpu_type=a800, gpu_count=8, tags="prod")
    MachineFactory(hostname="bravo", gpu_type=a100, gpu_count=4, tags="lab")
    MachineFactory(hostname="charlie", gpu_type=a100, gpu_count=2, nics=[])
    url = reverse("inventory:machine-list")

    def hostnames(**params):
        response = viewer_client.get(url, params)
        assert response.status_code == 200
        return [m.hostname for m, _ in response.context["rows"]]

    assert hostnames(q="rav") == ["bravo"]
    assert hostnames(gpu_type="a100-80g-sxm") == ["bravo", "charlie"]
    assert hostnames(tag="prod") == ["alpha"]
    assert hostnames(has_data_nic="false") == ["charlie"]
    assert hostnames(ordering="-gpu_count") == ["alpha", "bravo", "charlie"]
    assert hostnames(ordering="gpu_count") == ["charlie", "bravo", "alpha"]


def test_machine_list_paginates(viewer_client):
    for i in range(55):
        MachineFactory(hostname=f"node-{i:02d}", nics=[])

    first = viewer_client.get(reverse("inventory:machine-list"))
    second = viewer_client.get(reverse("inventory:machine-list"), {"page": 2})

    assert len(first.context["rows"]) == 50
    assert len(second.context["rows"]) == 5
    assert b"page=2" in first.content


def test_model_spec_list_filters_moe(viewer_client, catalog_loaded):
    response = viewer_client.get(reverse("inventory:modelspec-list"), {"is_moe": "true"})

    slugs = {spec.slug for spec in response.context["object_list"]}
    assert slugs == {
        "qwen3-30b-a3b",
        "qwen3-235b-a22b",
        "mixtral-8x7b",
        "deepseek-v3",
        "deepseek-r1",
        "gpt-oss-20b",
        "gpt-oss-120b",
    }


def test_machine_detail_shows_history_with_the_user(planner_client, planner, fleet):
    machine = fleet["machine"]
    url = reverse("inventory:machine-update", args=[machine.pk])
    data = machine_post(machine, gpu_count=4)

    response = planner_client.post(url, data)

    assert response.status_code == 302
    page = planner_client.get(machine.get_absolute_url()).content.decode()
    assert "pat-planner" in page
    assert "GPU count" in page
    assert "8 → 4" in page


def machine_post(machine=None, nics=(), **overrides):
    data = {
        "hostname": machine.hostname if machine else "new-node",
        "gpu_type": machine.gpu_type_id if machine else GpuTypeFactory(a800=True).pk,
        "gpu_count": machine.gpu_count if machine else 8,
        "interconnect": "nvlink",
        "status": "active",
        "pool": machine.pool_id or "" if machine else "",
        "nics-TOTAL_FORMS": str(max(len(nics), 1)),
        "nics-INITIAL_FORMS": "0",
        "nics-MIN_NUM_FORMS": "0",
        "nics-MAX_NUM_FORMS": "1000",
    }
    if machine is not None:
        existing = list(machine.nics.all())
        data["nics-TOTAL_FORMS"] = str(len(existing) + len(nics))
        data["nics-INITIAL_FORMS"] = str(len(existing))
        for i, nic in enumerate(existing):
            data.update(
                {
                    f"nics-{i}-id": nic.pk,
                    f"nics-{i}-name": nic.name,
                    f"nics-{i}-speed_gbps": nic.speed_gbps,
                    f"nics-{i}-kind": nic.kind,
                    f"nics-{i}-role": nic.role,
                }
            )
        offset = len(existing)
    else:
        offset = 0
    for i, nic in enumerate(nics, start=offset):
        data.update({f"nics-{i}-{k}": v for k, v in nic.items()})
    data.update(overrides)
    return data


def test_planner_creates_a_machine_with_nics(planner_client):
    data = machine_post(
        nics=[
            {"name": "eth1", "speed_gbps": "25", "kind": "ethernet", "role": "data"},
            {"name": "eno1", "speed_gbps": "1", "kind": "ethernet", "role": "management"},
        ]
    )

    response = planner_client.post(reverse("inventory:machine-create"), data)

    assert response.status_code == 302
    machine = Machine.objects.get(hostname="new-node")
    assert sorted(machine.nics.values_list("name", flat=True)) == ["eno1", "eth1"]


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"gpu_count": "0"}, "gpu_count", "GPU count must be between 1 and 64."),
        ({"gpu_count": "65"}, "gpu_count", "GPU count must be between 1 and 64."),
        ({"hostname": "bad_host"}, "hostname", "RFC 1123"),
        ({"hostname": "taken"}, "hostname", "A machine with this hostname already exists."),
    ],
    ids=["gpu-count-0", "gpu-count-65", "hostname-invalid", "hostname-duplicate"],
)
def test_machine_form_bad_input_names_the_field(planner_client, overrides, field, message):
    MachineFactory(hostname="taken")
    data = machine_post(**overrides)

    response = planner_client.post(reverse("inventory:machine-create"), data)

    assert response.status_code == 400
    errors = response.context["form"].errors[field]
    assert any(message in error for error in errors)
    assert Machine.objects.count() == 1


def test_machine_form_nic_speed_zero_is_a_field_error(planner_client):
    data = machine_post(
        nics=[{"name": "eth1", "speed_gbps": "0", "kind": "ethernet", "role": "data"}]
    )

    response = planner_client.post(reverse("inventory:machine-create"), data)

    assert response.status_code == 400
    nic_errors = response.context["formset"].forms[0].errors["speed_gbps"]
    assert nic_errors == ["NIC speed (Gb/s) must be greater than 0 (got 0)."]
    assert not Machine.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("memory_gib", "0", "Memory (GiB) must be greater than 0 (got 0)."),
        ("hbm_bandwidth_gbs", "-5", "Memory bandwidth (GB/s) must be greater than 0 (got -5)."),
    ],
    ids=["memory-0", "bandwidth-negative"],
)
def test_gpu_type_form_bad_input(planner_client, field, value, message):
    data = {
        "slug": "x1",
        "name": "X1",
        "vendor": "NVIDIA",
        "memory_gib": "24",
        "hbm_bandwidth_gbs": "900",
        "bf16_dense_tflops": "100",
        "nvlink_bandwidth_gbs": "0",
        "form_factor": "pcie",
        field: value,
    }

    response = planner_client.post(reverse("inventory:gputype-create"), data)

    assert response.status_code == 400
    assert response.context["form"].errors[field] == [message]
    assert not GpuType.objects.exists()


def test_model_spec_form_heads_not_divisible(planner_client):
    spec = ModelSpecFactory()
    url = reverse("inventory:modelspec-update", args=[spec.pk])
    data = {
        k: getattr(spec, k)
        for k in [
            "slug",
            "name",
            "family",
            "model_type",
            "num_layers",
            "hidden_size",
            "num_attention_heads",
            "head_dim",
            "intermediate_size",
            "vocab_size",
            "max_position_embeddings",
            "num_experts",
            "experts_per_token",
            "moe_intermediate_size",
            "num_shared_experts",
            "num_dense_layers",
            "kv_lora_rank",
            "q_lora_rank",
            "qk_rope_head_dim",
            "qk_nope_head_dim",
            "v_head_dim",
            "num_mtp_layers",
            "default_dtype",
        ]
    }
    data["num_kv_heads"] = 5

    response = planner_client.post(url, data)

    assert response.status_code == 400
    assert "must divide the attention heads" in response.context["form"].errors["num_kv_heads"][0]


def test_planner_creates_and_edits_a_pool(planner_client):
    response = planner_client.post(
        reverse("inventory:pool-create"), {"name": "shared-a100", "kind": "shared"}
    )
    pool = Pool.objects.get()
    planner_client.post(
        reverse("inventory:pool-update", args=[pool.pk]),
        {"name": "shared-a100", "kind": "dedicated", "description": "now dedicated"},
    )

    assert response.status_code == 302
    pool.refresh_from_db()
    assert pool.kind == "dedicated"
    assert pool.history.count() == 2


def test_delete_of_gpu_type_in_use_is_refused_with_its_users(planner_client, fleet):
    url = reverse("inventory:gputype-delete", args=[fleet["gpu"].pk])

    page = planner_client.get(url)
    response = planner_client.post(url)

    assert b"a800-node-1" in page.content
    assert response.status_code == 409
    assert b"machine: a800-node-1" in response.content
    assert GpuType.objects.filter(pk=fleet["gpu"].pk).exists()


def test_delete_of_model_spec_in_use_is_refused(planner_client, fleet):
    from inventory.selectors import register_usage_finder, unregister_usage_finder

    def finder(obj):
        return ["plan: 8B on A800"] if obj == fleet["spec"] else []

    register_usage_finder(finder)
    url = reverse("inventory:modelspec-delete", args=[fleet["spec"].pk])
    try:
        page = planner_client.get(url)
        response = planner_client.post(url)
    finally:
        unregister_usage_finder(finder)

    assert b"plan: 8B on A800" in page.content
    assert b"cannot be deleted" in page.content
    assert response.status_code == 409
    assert b"plan: 8B on A800" in response.content
    assert ModelSpec.objects.filter(pk=fleet["spec"].pk).exists()


def test_planner_deletes_an_unused_machine(planner_client, fleet):
    url = reverse("inventory:machine-delete", args=[fleet["machine"].pk])

    response = planner_client.post(url)

    assert response.status_code == 302
    assert not Machine.objects.exists()
    assert not NetworkInterface.objects.exists()


def test_fleet_summary_page_flags_machines_without_data_nic(viewer_client):
    MachineFactory(
        hostname="no-data-nic", nics=[{"name": "eno1", "speed_gbps": 1, "role": "management"}]
    )
    MachineFactory(hostname="fine")

    content = viewer_client.get(reverse("inventory:fleet-summary")).content.decode()

    assert "planning hazard" in content
    assert "no-data-nic" in content
    assert 'data-figure="gpus">16<' in content
    assert 'data-figure="gpu-memory">1280 GiB<' in content


def test_model_spec_detail_shows_breakdown_and_config(viewer_client, catalog_loaded):
    spec = ModelSpec.objects.get(slug="deepseek-v3")

    content = viewer_client.get(spec.get_absolute_url()).content.decode()

    assert "kv_lora_rank 512" in content
    assert "experts_per_layer" in content
    assert "&quot;model_type&quot;: &quot;deepseek_v3&quot;" in content


def test_export_unknown_format_is_404(viewer_client):
    assert viewer_client.get("/inventory/machines/export/xml/").status_code == 404


def test_import_config_json_by_paste(planner_client, planner):
    text = json.dumps(catalog_config("qwen3-30b-a3b"))

    response = planner_client.post(
        reverse("inventory:modelspec-import"), {"name": "Qwen3-30B-A3B (ours)", "config_text": text}
    )

    spec = ModelSpec.objects.get()
    assert response.status_code == 302
    assert response["Location"] == spec.get_absolute_url()
    assert spec.slug == "qwen3-30b-a3b-ours"
    assert spec.is_moe
    assert spec.history.get().history_user == planner


def test_import_config_json_by_upload(planner_client):
    upload = SimpleUploadedFile(
        "config.json", json.dumps(catalog_config("deepseek-v3")).encode(), "application/json"
    )

    response = planner_client.post(
        reverse("inventory:modelspec-import"), {"name": "DeepSeek-V3 mirror", "config_file": upload}
    )

    assert response.status_code == 302
    assert ModelSpec.objects.get().is_mla


@pytest.mark.parametrize(
    ("data", "field", "needle"),
    [
        ({"config_text": '{"model_type": "llama",'}, "config_text", "is not valid JSON"),
        ({"config_text": '{"model_type": "mystery"}'}, "config_text", "num_hidden_layers"),
        ({}, "config_text", "Paste a config.json or upload one"),
    ],
    ids=["not-json", "unknown-architecture", "nothing"],
)
def test_import_config_json_bad_input_is_a_field_error(planner_client, data, field, needle):
    response = planner_client.post(reverse("inventory:modelspec-import"), {"name": "X", **data})

    assert response.status_code == 400
    assert any(needle in error for error in response.context["form"].errors[field])
    assert not ModelSpec.objects.exists()


def test_import_config_json_upload_that_is_not_json(planner_client):
    upload = SimpleUploadedFile("config.json", b"\x89PNG not json")

    response = planner_client.post(
        reverse("inventory:modelspec-import"), {"name": "X", "config_file": upload}
    )

    assert response.status_code == 400
    assert "config.json is not valid JSON" in response.context["form"].errors["config_file"][0]


def test_import_config_json_duplicate_slug(planner_client):
    ModelSpecFactory(slug="mine")

    response = planner_client.post(
        reverse("inventory:modelspec-import"),
        {"name": "Mine", "config_text": json.dumps(catalog_config("qwen3-8b"))},
    )

    assert response.status_code == 400
    assert response.context["form"].errors["slug"] == [
        "A model spec with this slug already exists."
    ]


def test_pool_delete_page_says_the_machines_stay(planner_client, fleet):
    page = planner_client.get(reverse("inventory:pool-delete", args=[fleet["pool"].pk]))

    assert "Machines → no pool: a800-node-1" in page.content.decode()
