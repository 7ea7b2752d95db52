"""Every candidate of a saved plan downloads as a bundle; the result page shows the table."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.urls import reverse

from inventory.models import Machine
from planner.models import Plan
from planner.services import plan_create

pytestmark = pytest.mark.django_db

PLANS = "/api/v1/plans/"


def _files(body: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        return {n.split("/", 1)[1]: archive.read(n).decode() for n in archive.namelist()}


@pytest.fixture
def s2b_plan(demo_fleet, planner):
    # The inventory's management addresses are what other hosts and Nginx connect to.
    for i, host in enumerate(("a100-01", "a100-02")):
        Machine.objects.filter(hostname=host).update(management_address=f"10.0.1.{11 + i}")
    spec = {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "workload": {"concurrency": 16},
        "pinned_layout": {"tp": 4, "pp": 1, "replicas": 2},
        "hardware": {"pool": "a100-pool"},
    }
    return plan_create(spec=spec, actor=planner)


def test_every_candidate_downloads_as_a_bundle_on_each_variant(s2b_plan, viewer_api):
    result = s2b_plan.result
    assert result["recommendation"]["route"] == "B"
    rows = [*result["candidates"], result["pinned"]]
    downloaded = 0
    for row in rows:
        if len(row["hosts"]) != row["replicas"] or not row["fits"]:
            continue
        variants = ("B-mp", "B-ray") if row["nodes_per_replica"] > 1 else ("", "C-ray")
        for variant in variants:
            response = viewer_api.get(
                f"{PLANS}{s2b_plan.public_id}/configs/",
                {"candidate": row["id"], "variant": variant},
            )
            assert response.status_code == 200, response.content
            files = _files(response.content)
            assert "README.md" in files
            assert "allocation.json" in files
            assert any(name.startswith("launch-a100-0") for name in files)
            if variant == "C-ray":  # the application module ships; no per-node vllm serve
                assert "serveplan_vllm_app.py" in files
                assert "serveplan_vllm_app:app" in files["serve.yaml"]
                scripts = [t for n, t in files.items() if n.endswith(".sh")]
                assert not any("vllm serve" in t or "vllm'" in t for t in scripts)
            downloaded += 1
    assert downloaded >= 4


def test_pinned_candidate_bundle_uses_the_management_addresses(s2b_plan, client, viewer):
    client.force_login(viewer)
    pinned = s2b_plan.result["pinned"]
    url = reverse("planner:plan-export", kwargs={"public_id": s2b_plan.public_id, "fmt": "zip"})

    response = client.get(url, {"candidate": pinned["id"]})

    assert response.status_code == 200
    files = _files(response.content)
    assert "server 10.0.1.11:8000" in files["nginx.conf"]
    assert "server 10.0.1.12:8000" in files["nginx.conf"]
    assert "| `a100-01` | `10.0.1.11` | `vllm-r0` |" in files["README.md"]


def test_a_recommended_route_b_bundle_names_the_master_by_address(s2b_plan, viewer_api):
    files = _files(viewer_api.get(f"{PLANS}{s2b_plan.public_id}/configs/").content)
    assert "--master-addr 10.0.1.11" in files["launch-a100-02.sh"]
    assert "a100-01" not in files["launch-a100-02.sh"]


def test_unknown_candidate_or_variant_is_a_400_naming_it(s2b_plan, viewer_api, client, viewer):
    api = viewer_api.get(f"{PLANS}{s2b_plan.public_id}/configs/", {"candidate": "nope"})
    assert api.status_code == 400
    assert "nope" in api.json()["candidate"][0]
    best = s2b_plan.result["recommendation"]["candidate_id"]
    api = viewer_api.get(
        f"{PLANS}{s2b_plan.public_id}/configs/", {"candidate": best, "variant": "A-mp"}
    )
    assert api.status_code == 400
    assert "A-mp" in api.json()["variant"][0]
    client.force_login(viewer)
    url = reverse("planner:plan-export", kwargs={"public_id": s2b_plan.public_id, "fmt": "zip"})
    best = s2b_plan.result["recommendation"]["candidate_id"]
    response = client.get(url, {"candidate": best, "variant": "A-mp"})
    assert response.status_code == 400
    assert "A-mp" in response.content.decode()


def test_result_page_shows_the_allocation_table_and_candidate_download(s2b_plan, client, viewer):
    client.force_login(viewer)

    page = client.get(s2b_plan.get_absolute_url()).content.decode()

    assert "CUDA_VISIBLE_DEVICES" in page
    assert "vllm-r0-rank1" in page
    assert "10.0.1.12" in page
    assert 'data-testid="candidate-bundle-form"' in page


def test_a_plan_saved_before_bundles_downloads_a_rebuilt_bundle(
    s2b_plan, viewer_api, client, viewer
):
    legacy = {k: v for k, v in s2b_plan.result["configs"].items() if k not in ("bundle", "refused")}
    Plan.objects.filter(pk=s2b_plan.pk).update(result={**s2b_plan.result, "configs": legacy})

    files = _files(viewer_api.get(f"{PLANS}{s2b_plan.public_id}/configs/").content)

    assert "--node-rank 1" in files["launch-a100-02.sh"]
    client.force_login(viewer)
    page = client.get(s2b_plan.get_absolute_url()).content.decode()
    assert "saved before deployment bundles existed" in page


def test_each_script_header_is_translated_with_its_own_host_when_one_name_ends_another():
    """Hosts a.example and b-a.example: launch-b-a.example.sh names b-a.example, not a.example."""
    from django.utils import translation

    from planner.engine import plan, spec_from_dict
    from planner.engine.configs.bundle import build_bundle
    from planner.engine.configs.layout import BundleLayout, Variant
    from planner.services.bundles import bundle_files

    hosts = ("a.example", "b-a.example")
    spec = spec_from_dict(
        {
            "model": "qwen2.5-32b",
            "hardware": {
                "nodes": [
                    {"hostname": h, "gpu": "a100-80g-sxm", "gpu_count": 4, "nics": []}
                    for h in hosts
                ]
            },
        }
    )
    layout = BundleLayout.from_candidate(plan(spec).best)
    assert layout.hosts == (("a.example",), ("b-a.example",))
    bundle = build_bundle(spec, layout, spec.hardware.nodes, Variant("A", "mp"))
    with translation.override("zh-hans"):
        files = bundle_files(bundle.to_dict())
    # The per-host scripts; fetch-weights.sh, smoke-test.sh and register.sh run on any host.
    scripts = {
        name: text
        for name, text in files.items()
        if name.endswith(".sh") and name.partition("-")[2].removesuffix(".sh") in hosts
    }
    assert len(scripts) == 6
    for name, text in scripts.items():
        host = name.partition("-")[2].removesuffix(".sh")
        assert (
            text.splitlines()[1]
            == f"# 由 ServePlan 为 {host} 生成。各节点之间的执行顺序见 README.md。"
        )


def test_a_variant_without_a_candidate_applies_to_the_recommended_one(s2b_plan, viewer_api):
    url = f"{PLANS}{s2b_plan.public_id}/configs/"
    response = viewer_api.get(url, {"variant": "B-ray"})
    assert response.status_code == 200, response.content
    assert response["Content-Disposition"].endswith('-B-ray.zip"')
    files = _files(response.content)
    assert any("ray start" in text for name, text in files.items() if name.startswith("launch-"))
    refused = viewer_api.get(url, {"variant": "A-mp"})
    assert refused.status_code == 400
    assert "A-mp" in refused.json()["variant"][0]
