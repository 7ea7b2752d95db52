"""Issue 15 items 4 and 8: hostile or malformed input gets a 400 naming the field, never a 500
and never a huge stored row."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from inventory import bulk
from inventory.models import MachineImportBatch
from tests.inventory.conftest import catalog_config
from tests.planner.conftest import S2A_SPEC
from tests.planner.fleet import build_demo_fleet

pytestmark = pytest.mark.django_db

ALIAS_BOMB = b"""\
a: &a ["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"]
b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
machines:
  - hostname: bomb-01
    gpu_type: a800-80g-sxm
    gpu_count: 8
    notes: *f
"""


def upload(client, content: bytes, name: str):
    return client.post(
        reverse("inventory:machine-import"), {"file": SimpleUploadedFile(name, content)}
    )


def assert_refused(response, text: str) -> None:
    """The upload got a 400 whose page says `text`, and nothing was stored."""
    assert response.status_code == 400
    assert text in response.content.decode()
    assert not MachineImportBatch.objects.exists()


@pytest.mark.parametrize(
    ("body", "name", "says"),
    [
        (ALIAS_BOMB, "fleet.yaml", "anchors and aliases"),
        (
            b"machines:\n  - hostname: a\n    gpu_count: 1\n    gpu_count: 8\n",
            "f.yaml",
            "gpu_count",
        ),
        (b"hostname,gpu_type,gpu_count,gpu_count\na-01,a800-80g-sxm,1,8\n", "f.csv", "gpu_count"),
    ],
    ids=["yaml-alias-bomb", "yaml-duplicate-key", "csv-duplicate-column"],
)
def test_uploads_that_hide_or_multiply_values_are_refused(planner_client, body, name, says):
    response = upload(planner_client, body, name)

    assert_refused(response, says)


@pytest.mark.parametrize(
    ("value", "field"),
    [("2024-01-01", "notes"), ("!!binary aGVsbG8=", "notes"), (".nan", "gpu_count")],
    ids=["date", "binary", "nan"],
)
def test_yaml_tags_that_are_not_plain_values_are_a_400_naming_the_field(
    planner_client, value, field
):
    body = (
        "machines:\n  - hostname: a-01\n    gpu_type: a800-80g-sxm\n"
        f"    gpu_count: 8\n    {field}: {value}\n"
    ).encode()
    if field == "gpu_count":
        body = body.replace(b"    gpu_count: 8\n", b"", 1)

    response = upload(planner_client, body, "fleet.yaml")

    assert_refused(response, f"field {field}:")


def test_csv_cell_over_128_kib_is_a_400_naming_the_field(planner_client):
    header = ",".join(bulk.CSV_COLUMNS)
    columns = bulk.CSV_COLUMNS
    cells = ["" for _ in columns]
    cells[columns.index("hostname")] = "a-01"
    cells[columns.index("notes")] = "x" * (129 * 1024)
    body = (header + "\n" + ",".join(cells) + "\n").encode()

    response = upload(planner_client, body, "fleet.csv")

    assert_refused(response, "field notes: the value is 129 KiB")


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    "url",
    ["/api/v1/plans/evaluate/", "/api/v1/plans/", "/api/v1/inventory/machines/"],
)
def test_json_nested_100000_deep_is_a_400(planner_api, url):
    body = '{"model": ' + _nested(100_000) + "}"

    response = planner_api.post(url, body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert response.json() == {"model": ["nested more than 32 levels deep"]}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"hidden_size": 1e308, "vocab_size": 1e308}, "hidden_size"),
        ({"architectures": ["Llama\x00ForCausalLM"]}, "architectures"),
    ],
    ids=["sizes-of-1e308", "nul-in-a-value"],
)
def test_config_json_import_with_unstorable_values_is_a_400(planner_api, change, field):
    config = {**catalog_config("llama-3.1-8b"), **change}

    response = planner_api.post(
        "/api/v1/inventory/model-specs/import-config/",
        {"name": "Bad", "config": config},
        format="json",
    )

    assert response.status_code == 400, response.content[:300]
    # A NUL is refused by the JSON parser itself, under its path; a size by the config check.
    body = response.json()
    assert field in body.get("config", [""])[0] or any(
        k.startswith(f"config.{field}") for k in body
    )


def test_hf_config_with_sizes_of_1e308_in_a_plan_spec_is_a_400(planner_api):
    build_demo_fleet()
    config = {**catalog_config("llama-3.1-8b"), "hidden_size": 1e308}
    spec = {**S2A_SPEC, "model": {"slug": "huge", "hf_config": config}}

    response = planner_api.post("/api/v1/plans/evaluate/", spec, format="json")

    assert response.status_code == 400, response.content[:300]
    assert "hidden_size" in response.content.decode()


def test_hardware_nodes_as_a_number_is_a_400(planner_api):
    build_demo_fleet()
    spec = {**S2A_SPEC, "hardware": {"nodes": 2}}

    response = planner_api.post("/api/v1/plans/evaluate/", spec, format="json")

    assert response.status_code == 400, response.content[:300]
    assert "hardware.nodes" in response.content.decode()


def test_config_text_nested_100000_deep_is_a_400_on_config(planner_api):
    text = '{"model_type": "llama", "rope_scaling": ' + _nested(100_000) + "}"

    response = planner_api.post(
        "/api/v1/inventory/model-specs/import-config/",
        {"name": "Deep", "config_text": text},
        format="json",
    )

    assert response.status_code == 400, response.content[:300]
    assert "rope_scaling" in response.json()["config"][0]


def test_yaml_nested_deeply_is_refused(planner_client):
    body = b"machines:\n  - notes: " + b"[" * 5000 + b"]" * 5000 + b"\n"

    response = upload(planner_client, body, "fleet.yaml")

    assert response.status_code == 400
    assert "levels deep" in response.content.decode()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"model": "qwen2.5-7b", "workload": {"concurrency": 1e999}}', "workload.concurrency"),
        ('{"model": "qwen2.5-7b", "max_model_len": ' + "9" * 400 + "}", "max_model_len"),
    ],
    ids=["overflows-to-infinity", "beyond-64-bits"],
)
def test_huge_numbers_are_a_400_naming_the_field(planner_api, body, field):
    response = planner_api.post("/api/v1/plans/evaluate/", body, content_type="application/json")

    assert response.status_code == 400, response.content[:300]
    assert field in response.json()


def test_a_yaml_number_of_5000_digits_is_refused(planner_client):
    body = b"machines:\n  - hostname: a-01\n    gpu_count: " + b"9" * 5000 + b"\n"

    response = upload(planner_client, body, "fleet.yaml")

    assert_refused(response, "is too long")


@pytest.mark.parametrize(
    ("body", "name"),
    [
        (b"hostname,notes\na-01,bad\x00note\n", "f.csv"),
        (b'machines:\n  - hostname: a-01\n    notes: "bad\\0note"\n', "f.yaml"),
    ],
    ids=["csv", "yaml"],
)
def test_a_nul_in_an_imported_cell_is_refused_naming_the_field(planner_client, body, name):
    response = upload(planner_client, body, name)

    assert_refused(response, "field notes: NUL characters are not accepted")
