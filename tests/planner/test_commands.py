"""python manage.py plan --spec FILE.json"""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from planner.presentation.api import api_result
from planner.services import plan_evaluate


def _write(tmp_path, spec) -> str:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec) if not isinstance(spec, str) else spec)
    return str(path)


def test_plan_prints_the_result_json(demo_fleet, tmp_path, s2a_spec, capsys):
    call_command("plan", "--spec", _write(tmp_path, s2a_spec))

    printed = json.loads(capsys.readouterr().out)
    assert printed == api_result(plan_evaluate(spec=s2a_spec).result)
    assert printed["recommendation"]["route"] == "A"


def test_plan_accepts_inline_hardware_without_inventory(db, tmp_path, capsys):
    spec = {
        "model": "qwen3-8b",
        "max_model_len": 8192,
        "hardware": {"node_count": 1, "gpus_per_node": 1, "gpu": "rtx-4090"},
    }
    call_command("plan", "--spec", _write(tmp_path, spec), "--indent", "0")
    out = capsys.readouterr().out
    assert "\n" not in out.strip()
    assert json.loads(out)["recommendation"]["route"] == "single"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param({"model": "nope", "hardware": {"fleet": True}}, "model.slug", id="slug"),
        pytest.param(
            {"model": "qwen2.5-32b", "hardware": {"hostnames": ["ghost"]}},
            "hardware.hostnames: unknown hostname(s): ghost",
            id="hostname",
        ),
        pytest.param(
            {"model": "qwen2.5-32b", "gpu_memory_utilization": 1.5, "hardware": {"fleet": True}},
            "gpu_memory_utilization: must be in (0.0, 1.0]",
            id="utilization",
        ),
        pytest.param(
            {"model": "qwen2.5-32b", "pinned_layout": {"tp": 3}, "hardware": {"fleet": True}},
            "pinned_layout.tp",
            id="tp",
        ),
    ],
)
def test_bad_spec_is_a_clear_message_and_exit_2(demo_fleet, tmp_path, spec, expected):
    with pytest.raises(CommandError) as info:
        call_command("plan", "--spec", _write(tmp_path, spec))
    assert expected in str(info.value)
    assert info.value.returncode == 2


def test_unreadable_or_invalid_json(db, tmp_path):
    with pytest.raises(CommandError, match="cannot read spec file"):
        call_command("plan", "--spec", str(tmp_path / "missing.json"))
    with pytest.raises(CommandError, match="not valid JSON: .* line 1"):
        call_command("plan", "--spec", _write(tmp_path, "{nope"))


def test_command_line_exit_status_and_stderr(demo_fleet, tmp_path, capfd):
    """Through manage.py's real entry point: non-zero exit, message on stderr, nothing on stdout."""
    from django.core.management import execute_from_command_line

    path = _write(tmp_path, {"model": "nope", "hardware": {"fleet": True}})
    with pytest.raises(SystemExit) as info:
        execute_from_command_line(["manage.py", "plan", "--spec", path])
    assert info.value.code == 2
    out, err = capfd.readouterr()
    assert out == ""
    assert "model.slug: unknown model slug 'nope'" in err
