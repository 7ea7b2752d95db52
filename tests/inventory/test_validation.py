"""Bad input at the model/service level: each message names the field and the allowed range."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from inventory import services
from inventory.models import Machine, ModelSpec, NetworkInterface
from tests.inventory.factories import GpuTypeFactory, MachineFactory, ModelSpecFactory

pytestmark = pytest.mark.django_db


def machine_fields(**overrides):
    fields = {
        "hostname": "gpu-01",
        "gpu_type": GpuTypeFactory(a800=True),
        "gpu_count": 8,
        "interconnect": "nvlink",
    }
    fields.update(overrides)
    return fields


@pytest.mark.parametrize("count", [0, 65, 100], ids=["zero", "sixty-five", "hundred"])
def test_gpu_count_outside_1_to_64_is_refused_with_the_range(count):
    with pytest.raises(ValidationError) as excinfo:
        services.machine_create(**machine_fields(gpu_count=count))

    assert excinfo.value.message_dict["gpu_count"] == ["GPU count must be between 1 and 64."]
    assert not Machine.objects.exists()


@pytest.mark.parametrize(
    ("field", "value", "label"),
    [
        ("memory_gib", 0, "Memory (GiB)"),
        ("memory_gib", -80, "Memory (GiB)"),
        ("hbm_bandwidth_gbs", 0, "Memory bandwidth (GB/s)"),
        ("bf16_dense_tflops", -1, "Dense BF16 TFLOPS"),
    ],
    ids=["memory-zero", "memory-negative", "bandwidth-zero", "tflops-negative"],
)
def test_gpu_memory_or_bandwidth_not_above_zero_is_refused(field, value, label):
    fields = {
        "slug": "bad-gpu",
        "name": "Bad",
        "memory_gib": 80,
        "hbm_bandwidth_gbs": 2000,
        "bf16_dense_tflops": 300,
        "form_factor": "sxm",
        field: value,
    }

    with pytest.raises(ValidationError) as excinfo:
        services.gpu_type_create(**fields)

    assert excinfo.value.message_dict[field] == [f"{label} must be greater than 0 (got {value})."]


def test_negative_nvlink_bandwidth_names_the_range():
    with pytest.raises(ValidationError) as excinfo:
        services.gpu_type_create(
            slug="x",
            name="X",
            memory_gib=24,
            hbm_bandwidth_gbs=900,
            bf16_dense_tflops=100,
            form_factor="pcie",
            nvlink_bandwidth_gbs=-1,
        )

    assert "NVLink bandwidth per GPU (GB/s) must be between 0 and 100000." in str(excinfo.value)


def test_duplicate_hostname_is_refused_case_insensitively():
    MachineFactory(hostname="gpu-01")

    with pytest.raises(ValidationError) as excinfo:
        services.machine_create(**machine_fields(hostname="GPU-01"))

    assert excinfo.value.message_dict["hostname"] == [
        "A machine with this hostname already exists."
    ]


@pytest.mark.parametrize(
    "hostname",
    ["-bad", "bad_host", "a" * 64, "host..example", "dot.", "trailing-newline\n"],
    ids=str,
)
def test_hostname_must_be_rfc_1123(hostname):
    with pytest.raises(ValidationError) as excinfo:
        services.machine_create(**machine_fields(hostname=hostname))

    assert "RFC 1123" in excinfo.value.message_dict["hostname"][0]


@pytest.mark.parametrize("speed", [0, -25], ids=["zero", "negative"])
def test_nic_speed_not_above_zero_is_refused(speed):
    machine = MachineFactory(nics=[])

    with pytest.raises(ValidationError) as excinfo:
        services.nic_create(machine=machine, name="eth1", speed_gbps=speed)

    assert excinfo.value.message_dict["speed_gbps"] == [
        f"NIC speed (Gb/s) must be greater than 0 (got {speed})."
    ]


def test_nic_speed_error_inside_a_machine_names_the_interface_and_writes_nothing():
    with pytest.raises(ValidationError) as excinfo:
        services.machine_create(
            **machine_fields(),
            nics=[
                {"name": "eth1", "speed_gbps": 25},
                {"name": "eth2", "speed_gbps": 0},
            ],
        )

    message = excinfo.value.message_dict["nics"][0]
    assert "Interface 2 (eth2)" in message
    assert "NIC speed (Gb/s) must be greater than 0" in message
    assert not Machine.objects.exists()
    assert not NetworkInterface.objects.exists()


def _small_model(**changes):
    return {
        "slug": "small",
        "name": "Small",
        "model_type": "llama",
        "num_layers": 2,
        "hidden_size": 512,
        "num_attention_heads": 32,
        "num_kv_heads": 8,
        "head_dim": 16,
        "intermediate_size": 1024,
        "vocab_size": 1000,
        "max_position_embeddings": 2048,
        **changes,
    }


@pytest.mark.parametrize("repo", ["meta/llama 3", "a/b;reboot", "x\ny", "../etc", "a/b/c"])
def test_repository_that_would_reach_a_script_is_refused(repo):
    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_create(**_small_model(slug="repo-check", hf_repo=repo))

    assert "Hugging Face id" in excinfo.value.message_dict["hf_repo"][0]
    assert not ModelSpec.objects.exists()


def test_heads_not_divisible_by_kv_heads_is_refused():
    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_create(**_small_model(slug="odd", name="Odd", num_kv_heads=5))

    assert excinfo.value.message_dict["num_kv_heads"][0].startswith(
        "KV heads (5) must divide the attention heads (32) evenly"
    )
    assert not ModelSpec.objects.exists()


def test_moe_experts_per_token_above_experts_is_refused():
    spec = ModelSpecFactory()

    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_update(
            model_spec=spec, num_experts=8, experts_per_token=9, moe_intermediate_size=128
        )

    assert excinfo.value.message_dict["experts_per_token"] == [
        "Experts per token must be between 1 and the routed experts (8)."
    ]


@pytest.mark.parametrize(
    ("model_factory", "field", "value"),
    [
        (lambda: MachineFactory(nics=[]), "gpu_count", 0),
        (lambda: MachineFactory(nics=[]), "gpu_count", 65),
        (lambda: GpuTypeFactory(), "memory_gib", 0),
        (lambda: GpuTypeFactory(), "hbm_bandwidth_gbs", -1),
        (lambda: ModelSpecFactory(), "num_kv_heads", 5),
    ],
    ids=["gpu-count-0", "gpu-count-65", "memory-0", "bandwidth-negative", "kv-heads-5"],
)
def test_database_constraints_hold_even_without_validation(model_factory, field, value):
    obj = model_factory()
    setattr(obj, field, value)

    with pytest.raises(IntegrityError), transaction.atomic():
        obj.save(update_fields=[field])


def test_nic_speed_database_constraint():
    nic = NetworkInterface(machine=MachineFactory(nics=[]), name="eth1", speed_gbps=0)

    with pytest.raises(IntegrityError), transaction.atomic():
        nic.save()


@pytest.mark.parametrize("slug", ["small\n", "Small", "-small", "a b"], ids=repr)
def test_model_slug_with_a_trailing_newline_or_other_characters_is_refused(slug):
    """The slug becomes --served-model-name in every generated script."""
    with pytest.raises(ValidationError) as excinfo:
        services.model_spec_create(**_small_model(slug=slug))

    assert "Slug" in excinfo.value.message_dict["slug"][0]
    assert not ModelSpec.objects.exists()
