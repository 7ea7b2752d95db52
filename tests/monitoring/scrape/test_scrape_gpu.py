"""GPU exporters: real dcgm-exporter and nvidia_gpu_exporter payloads, parsed unchanged.

Sources of every fixture: tests/monitoring/fixtures/gpu/SOURCES.md.
"""

from __future__ import annotations

import string
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitoring.scrape import from_text, kinds
from monitoring.scrape.errors import ParseError
from monitoring.scrape.gpu import GpuState, classify, extract, numeric_lines
from monitoring.simulator.dcgm_sim import DEMO_GPU_MACHINES, GpuMachineProfile, SimDcgm

from .conftest import fixture_text


def values(text: str) -> dict[str, float]:
    result = from_text(text, "gpu", ts=0)
    assert result.ok, result.errors
    return {s.series_id: s.value for s in result.samples}


def test_dcgm_exporter_t4_payload_gives_the_gpu_values():
    got = values(fixture_text("gpu", "dcgm_t4_datadog.txt"))

    assert got['gpu.utilization_pct{gpu="0"}'] == 0
    assert got['gpu.memory_used_mib{gpu="0"}'] == 0
    assert got['gpu.memory_total_mib{gpu="0"}'] == 15109  # FB_USED + FB_FREE (no FB_TOTAL)
    assert got['gpu.power_w{gpu="0"}'] == pytest.approx(8.969)
    assert got['gpu.temperature_c{gpu="0"}'] == 25
    assert got['gpu.sm_clock_mhz{gpu="0"}'] == 300
    assert got['gpu.xid_last{gpu="0"}'] == 0
    assert got["gpu.machine.gpus"] == 1
    assert got["gpu.machine.gpus_idle"] == 1
    assert got["gpu.machine.gpus_busy"] == 0


def test_dcgm_exporter_facts_carry_model_uuid_and_host_name():
    result = from_text(fixture_text("gpu", "dcgm_t4_datadog.txt"), "gpu", ts=0)

    assert result.info["hostname"] == "424773df46e0"
    assert result.info["gpus"]["0"] == {
        "uuid": "GPU-20c56d28-0da5-6d26-a36a-e7af1ce2586e",
        "model": "Tesla T4",
    }


def test_mig_instances_are_series_of_their_own_with_the_pods_that_use_them():
    result = from_text(fixture_text("gpu", "dcgm_h100_mig_k8s_issue512.txt"), "gpu", ts=0)
    got = {s.series_id: s.value for s in result.samples}

    # MIG has no DCGM_FI_DEV_GPU_UTIL: utilisation comes from the graphics engine activity.
    assert got['gpu.utilization_pct{gpu="0",mig="7"}'] == 0
    assert {'gpu.utilization_pct{gpu="0",mig="8"}', 'gpu.utilization_pct{gpu="0",mig="9"}'} <= set(
        got
    )
    assert got["gpu.machine.gpus"] == 1  # one physical GPU, three instances
    assert got["gpu.machine.gpus_idle"] == 3
    facts = result.info["gpus"]
    assert facts["0/7"]["pod"] == "text-embedding-predictor-00008-deployment-57946f6c67-vdtjl"
    assert facts["0/7"]["namespace"] == "model-playground-stg"
    assert facts["0/7"]["mig_profile"] == "1g.10gb"
    assert "pod" not in facts["0/8"]
    assert result.info["hostname"] == "gsrh100-074"


def test_dcgm_exporter_4_lower_case_hostname_label_is_read():
    result = from_text(fixture_text("gpu", "dcgm_mig_k8s_issue736.txt"), "gpu", ts=0)

    assert result.ok
    assert result.info["hostname"] == "dcgm-exporter-wwwjh"
    # Only FB_FREE is there: no total can be made from it, nothing is invented.
    assert not [s for s in result.samples if s.key == "gpu.memory_total_mib"]


def test_non_numeric_values_are_skipped_and_counted_and_the_rest_is_kept():
    text = fixture_text("gpu", "dcgm_t4_datadog.txt") + fixture_text("gpu", "dcgm_error_values.txt")

    result = from_text(text, "gpu", ts=0)

    assert result.ok
    got = {s.series_id: s.value for s in result.samples}
    assert got['gpu.temperature_c{gpu="0"}'] == 25
    # COMPUTE_PIDS, VGPU_PER_PROCESS_UTILIZATION (with its unbalanced quote), VGPU_INSTANCE_IDS
    assert got["scrape.samples_skipped"] == 3
    assert any("non-numeric" in w for w in result.warnings)


def test_a_payload_of_only_unreadable_samples_is_a_parse_error_that_says_so():
    with pytest.raises(ParseError, match="3 non-numeric"):
        extract(fixture_text("gpu", "dcgm_error_values.txt"), 0)


def test_dcgm_blank_sentinels_are_skipped_not_stored():
    # dcgm-exporter's README shows an unsupported field as DCGM's int64 blank value.
    text = (
        "# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n"
        "# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n"
        'DCGM_FI_DEV_GPU_TEMP{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"} '
        "9223372036854775794\n"
        'DCGM_FI_DEV_SM_CLOCK{gpu="0", UUID="GPU-604ac76c-d9cf-fef3-62e9-d92044ab6e52"} 139\n'
    )

    got = values(text)

    assert 'gpu.temperature_c{gpu="0"}' not in got
    assert got['gpu.sm_clock_mhz{gpu="0"}'] == 139
    assert got["scrape.samples_skipped"] == 1


def test_nvidia_gpu_exporter_h100_under_load():
    got = values(fixture_text("gpu", "nvidia_smi_h100_load.txt"))

    assert got['gpu.utilization_pct{gpu="0"}'] == 100  # utilization_gpu_ratio 1
    assert got['gpu.memory_used_mib{gpu="0"}'] == 19818  # 2.0780679168e+10 bytes
    assert got['gpu.memory_total_mib{gpu="0"}'] == 81559
    assert got['gpu.power_w{gpu="0"}'] == pytest.approx(631.95)
    assert got['gpu.power_limit_w{gpu="0"}'] == 700
    assert got['gpu.temperature_c{gpu="0"}'] == 59
    assert got['gpu.sm_clock_mhz{gpu="0"}'] == pytest.approx(1980)
    assert got['gpu.dram_active_pct{gpu="0"}'] == pytest.approx(11)
    assert got['gpu.throttle_thermal{gpu="0"}'] == 0
    assert got["gpu.machine.gpus_busy"] == 1


def test_nvidia_gpu_exporter_old_names_show_power_throttling():
    result = from_text(fixture_text("gpu", "nvidia_smi_rtx2080super.txt"), "gpu", ts=0)
    got = {s.series_id: s.value for s in result.samples}

    assert got['gpu.throttle_power{gpu="0"}'] == 1  # clocks_event_reasons_sw_power_cap 1
    assert got["gpu.machine.gpus_throttled"] == 1
    assert got['gpu.memory_total_mib{gpu="0"}'] == 8192
    assert result.info["gpus"]["0"]["model"] == "NVIDIA GeForce RTX 2080 SUPER"


def test_nvidia_gpu_exporter_mig_mode_has_no_utilisation_and_says_nothing_about_it():
    got = values(fixture_text("gpu", "nvidia_smi_h100_mig_load.txt"))

    assert 'gpu.utilization_pct{gpu="0"}' not in got
    assert "gpu.machine.gpus_idle" not in got  # unknown is not idle
    assert got['gpu.temperature_c{gpu="0"}'] == 53


def test_a_gpu_with_full_memory_and_no_work_is_stuck():
    text = (
        'DCGM_FI_DEV_GPU_UTIL{gpu="0"} 0\nDCGM_FI_DEV_FB_USED{gpu="0"} 79000\n'
        'DCGM_FI_DEV_FB_FREE{gpu="0"} 2000\nDCGM_FI_DEV_GPU_UTIL{gpu="1"} 0\n'
        'DCGM_FI_DEV_FB_USED{gpu="1"} 10\nDCGM_FI_DEV_FB_FREE{gpu="1"} 80990\n'
    )

    got = values(text)

    assert got["gpu.machine.gpus_stuck"] == 1
    assert got["gpu.machine.gpus_idle"] == 2


def test_throttle_reason_bits_split_into_thermal_and_power():
    text = (
        'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0"} 64\n'  # HW thermal slowdown
        'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="1"} 4\n'  # SW power cap
        'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="2"} 1\n'  # idle: no throttling
    )

    got = values(text)

    assert got['gpu.throttle_thermal{gpu="0"}'] == 1
    assert got['gpu.throttle_power{gpu="1"}'] == 1
    assert got['gpu.throttle_thermal{gpu="2"}'] == 0 == got['gpu.throttle_power{gpu="2"}']
    assert got["gpu.machine.gpus_throttled"] == 2


@pytest.mark.parametrize("profile", DEMO_GPU_MACHINES, ids=lambda p: p.hostname)
def test_the_simulator_speaks_dcgm_exporter_like_the_real_payloads(profile: GpuMachineProfile):
    text = SimDcgm(profile).metrics(time.time()).decode()
    real = values(fixture_text("gpu", "dcgm_t4_datadog.txt"))

    result = from_text(text, "gpu", ts=0)

    assert result.ok
    got = {s.series_id: s.value for s in result.samples}
    per_gpu_keys = {sid.split("{")[0] for sid in real if "{" in sid}
    for gpu in range(profile.gpu_count):
        assert {k for k in per_gpu_keys if f'{k}{{gpu="{gpu}"}}' in got} == per_gpu_keys
    assert got["gpu.machine.gpus"] == profile.gpu_count
    assert result.info["hostname"] == profile.hostname
    assert result.info["gpus"]["0"]["model"] == profile.model


def test_the_simulator_plays_each_role():
    sim = SimDcgm(DEMO_GPU_MACHINES[1])  # a800-node-2: 4 serving, stuck, hot, 2 free
    got = values(sim.metrics(time.time()).decode())

    assert got["gpu.machine.gpus_stuck"] == 1
    assert got['gpu.memory_used_pct{gpu="4"}'] > 95
    assert got["gpu.machine.gpus_busy"] >= 4


@pytest.mark.parametrize("profile", DEMO_GPU_MACHINES, ids=lambda p: p.hostname)
def test_the_machine_counts_agree_with_the_state_of_each_stored_gpu(profile: GpuMachineProfile):
    # The alerts read the machine counts, the Machines view classifies each GPU's stored values.
    got = values(SimDcgm(profile).metrics(time.time()).decode())
    states = [
        classify(got[f'gpu.utilization_pct{{gpu="{g}"}}'], got[f'gpu.memory_used_pct{{gpu="{g}"}}'])
        for g in range(profile.gpu_count)
    ]

    assert got["gpu.machine.gpus_busy"] == states.count(GpuState.BUSY)
    assert got["gpu.machine.gpus_stuck"] == states.count(GpuState.STUCK)
    assert got["gpu.machine.gpus_idle"] == sum(1 for s in states if s.idle)


def test_the_demo_gpu_fleet_matches_the_inventory_demo():
    from inventory.demo import DEMO_MACHINES

    assert {(p.hostname, p.gpu_count) for p in DEMO_GPU_MACHINES} == {
        (m["hostname"], m["gpu_count"]) for m in DEMO_MACHINES
    }


def test_the_registry_knows_every_kind_and_refuses_others():
    assert set(kinds.KINDS) == {"vllm", "ray", "gpu"}
    with pytest.raises(ValueError, match="vllm, ray, gpu"):
        kinds.get("promql")


@given(
    st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " \t", max_size=40)
)
def test_any_value_text_is_kept_only_when_it_is_a_number(value: str):
    line = f'DCGM_FI_DEV_GPU_TEMP{{gpu="0"}} {value}'
    cleaned = numeric_lines(line)
    kept, dropped = cleaned.text, cleaned.dropped

    try:
        float(value.split()[0] if value.split() else "x")
        is_number = True
    except ValueError:
        is_number = False
    assert (len(kept.strip().splitlines()) == 1) == is_number
    assert (dropped == ["DCGM_FI_DEV_GPU_TEMP"]) == (not is_number)
