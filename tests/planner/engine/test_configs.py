"""Generated configs: flags exist in the targeted vLLM, Nginx passes nginx -t, Serve schema."""

import shutil
import subprocess

import pytest
import yaml

from planner.engine import plan, spec_from_dict
from planner.engine.configs.vllm import emitted_flags
from planner.engine.vllm_flags import VLLM_SERVE_FLAGS
from tests.planner.engine.conftest import hardware

SPECS = {
    "route-a": {
        "model": "llama-3.1-70b",
        "weight_dtype": "fp8",
        "kv_cache_dtype": "fp8",
        "max_num_seqs": 128,
        "workload": {"concurrency": 64},
        "hardware": hardware(2, 8, "h100-sxm", link=400, kind="roce"),
    },
    "route-b-mp": {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "workload": {"concurrency": 16},
        "hardware": hardware(2, 4, "a100-80g-sxm"),
    },
    "route-b-ray": {
        "model": "qwen2.5-72b",
        "max_model_len": 65536,
        "rope_scaling_factor": 4,
        "max_num_batched_tokens": 4096,
        "workload": {"concurrency": 16},
        "hardware": hardware(2, 4, "a100-80g-sxm", pool_kind="shared"),
    },
    "turing": {
        "model": "llama-3.1-8b",
        "max_model_len": 4096,
        "workload": {"concurrency": 8},
        "hardware": hardware(1, 2, "t4"),
    },
    "route-c": {
        "model": "qwen3-30b-a3b",
        "workload": {"concurrency": 64, "traffic_shape": "diurnal"},
        "operations": {"ray_in_use": True, "models_change_often": True},
        "hardware": hardware(3, 8, "h100-sxm", link=200, kind="infiniband"),
    },
}


@pytest.fixture(params=sorted(SPECS))
def result(request):
    return plan(spec_from_dict(SPECS[request.param]))


def _vllm_argvs(configs):
    argvs = [c["argv"] for c in configs["vllm_serve"]]
    for app in (configs["serve_config"] or {}).get("applications", []):
        argvs.append(app["args"]["vllm_args"])
    return argvs


def test_every_emitted_vllm_flag_exists_in_target_version(result):
    flags = emitted_flags(_vllm_argvs(result.configs))
    assert flags
    assert flags <= VLLM_SERVE_FLAGS


def test_bf16_checkpoints_are_served_in_fp16_below_ampere_only(result):
    # A T4 has no bf16: vLLM before its automatic fp16 fallback refused dtype auto there.
    on_t4 = result.node_selection.gpu == "t4"
    for argv in _vllm_argvs(result.configs):
        assert argv[argv.index("--dtype") + 1] == "half" if on_t4 else "--dtype" not in argv


def test_never_nnodes_with_ray_backend(result):
    for cmd in result.configs["vllm_serve"]:
        argv = cmd["argv"]
        if "--nnodes" in argv:
            assert argv[argv.index("--distributed-executor-backend") + 1] == "mp"


def test_env_and_docker_lines(result):
    env = result.configs["env_file"]
    assert "NCCL_SOCKET_IFNAME=eth1" in env
    files = result.configs["bundle"]["files"]
    launches = [text for name, text in files.items() if name.startswith("launch-")]
    assert launches
    for text in launches:
        assert "docker run -d" in text
        assert "--ipc=host" in text
        assert "--network host" in text
        assert "vllm/vllm-openai:v0.32.0" in text


def test_roce_sets_gid_index_and_ethernet_disables_ib():
    roce = plan(spec_from_dict(SPECS["route-a"])).configs["env_file"]
    eth = plan(spec_from_dict(SPECS["route-b-mp"])).configs["env_file"]
    assert "NCCL_IB_GID_INDEX=3" in roce
    assert "NCCL_IB_DISABLE=1" in eth


def test_nginx_directives():
    conf = plan(spec_from_dict(SPECS["route-a"])).configs["nginx_conf"]
    for directive in (
        "least_conn;",
        "max_fails=2 fail_timeout=5s",
        "proxy_read_timeout 300s;",
        "proxy_http_version 1.1;",
        'proxy_set_header Connection "";',
        "proxy_buffering off;",
    ):
        assert directive in conf


@pytest.mark.integration
def test_nginx_config_passes_nginx_t(tmp_path):
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not shutil.which(nginx):
        pytest.skip("nginx not installed (apt-get install -y nginx)")
    conf = plan(spec_from_dict(SPECS["route-a"])).configs["nginx_conf"]
    # nginx -t resolves upstream hostnames: map the planned hosts to loopback.
    conf = conf.replace("server node-1:", "server 127.0.0.1:").replace(
        "server node-2:", "server 127.0.0.2:"
    )
    (tmp_path / "logs").mkdir()
    (tmp_path / "vllm.conf").write_text(conf.replace("listen 80;", "listen 18080;"))
    (tmp_path / "nginx.conf").write_text(
        "pid nginx.pid;\nerror_log logs/error.log;\nevents {}\n"
        "http {\n  access_log off;\n  include vllm.conf;\n}\n"
    )
    proc = subprocess.run(
        [nginx, "-t", "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.ray
def test_serve_yaml_validates_against_rays_schema():
    schema = pytest.importorskip("ray.serve.schema")
    result = plan(spec_from_dict(SPECS["route-c"]))
    assert result.recommendation.route == "C"
    config = yaml.safe_load(result.configs["serve_yaml"])
    parsed = schema.ServeDeploySchema.model_validate(config)
    deployment = parsed.applications[0].deployments[0]
    assert deployment.ray_actor_options.num_gpus == result.best.tp * result.best.pp
    assert deployment.autoscaling_config["min_replicas"] >= 1


def test_ray_start_lines_use_known_flags():
    from planner.engine.configs.ray import RAY_START_FLAGS

    lines = plan(spec_from_dict(SPECS["route-b-ray"])).configs["ray_start"]
    assert lines[0]["role"] == "head"
    for line in lines:
        flags = {tok.split("=")[0] for tok in line["argv"] if tok.startswith("--")}
        assert flags <= RAY_START_FLAGS
        assert "--num-gpus=4" in line["argv"]


@pytest.mark.ray
def test_ray_start_flags_exist_in_installed_ray():
    pytest.importorskip("ray")
    import sys

    from planner.engine.configs.ray import RAY_START_FLAGS

    out = subprocess.run(
        [sys.executable, "-m", "ray.scripts.scripts", "start", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    missing = sorted(f for f in RAY_START_FLAGS if f not in out)
    assert not missing


def test_serve_app_module_is_shipped_with_route_c_and_compiles():
    configs = plan(spec_from_dict(SPECS["route-c"])).configs

    source = configs["serve_app_py"]

    compile(source, "serveplan_vllm_app.py", "exec")
    assert "serveplan_vllm_app:app" in configs["serve_yaml"]


@pytest.mark.ray
def test_serve_app_builds_from_the_yaml_args(tmp_path, monkeypatch):
    pytest.importorskip("ray.serve")
    configs = plan(spec_from_dict(SPECS["route-c"])).configs
    (tmp_path / "serveplan_vllm_app.py").write_text(configs["serve_app_py"])
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__("serveplan_vllm_app")
    args = yaml.safe_load(configs["serve_yaml"])["applications"][0]["args"]

    application = module.app(args)

    assert type(application).__name__ == "Application"
