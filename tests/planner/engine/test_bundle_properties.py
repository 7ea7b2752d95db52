"""Properties of bundles: random valid plans never clash and dry-run as planned; hostile strings
never reach a script, and the scripts' quoting keeps every token as the table has it."""

from __future__ import annotations

import shlex
import string
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from catalog import identifiers
from planner.engine import plan, spec_from_dict
from planner.engine.configs.allocation import BundleClash, HostAllocation, Process, ProcessKind
from planner.engine.configs.bundle import build_bundle
from planner.engine.configs.layout import BundleLayout, variants
from planner.engine.configs.scripts import render_start
from planner.engine.spec import SpecError
from tests.planner.engine.bundle_dryrun import _read_calls as read_calls
from tests.planner.engine.bundle_dryrun import dry_run, run_script, unpack, write_stubs
from tests.planner.engine.bundle_expect import assert_dry_run_matches_plan
from tests.planner.engine.conftest import LLAMA_8B_CONFIG

MODELS = ("qwen3-8b", "qwen2.5-32b", "llama-3.1-70b", "qwen3-30b-a3b", "qwen2.5-72b")
GPUS = ("a100-80g-sxm", "h100-sxm", "l40s", "a800-80g-sxm")


@st.composite
def valid_specs(draw):
    n_nodes = draw(st.integers(1, 4))
    gpus = draw(st.sampled_from((1, 2, 4, 8)))
    pool = draw(st.sampled_from(("dedicated", "shared")))
    nodes = []
    for i in range(n_nodes):
        node = {
            "hostname": f"h{i}.example",
            "address": f"192.168.7.{10 + i}",
            "gpu": draw(st.sampled_from(GPUS)) if i == 0 else nodes[0]["gpu"],
            "gpu_count": gpus,
            "nics": [{"name": "ens3f0", "speed_gbps": draw(st.sampled_from((25, 100, 400)))}],
        }
        if pool == "shared" and draw(st.booleans()):
            node["free_gpus"] = draw(st.integers(1, gpus))
        nodes.append(node)
    spec = {
        "model": draw(st.sampled_from(MODELS)),
        "max_model_len": draw(st.sampled_from((4096, 8192, 32768))),
        "workload": {
            "concurrency": draw(st.integers(1, 256)),
            "traffic_shape": draw(st.sampled_from(("steady", "diurnal", "bursty"))),
        },
        "operations": {
            "ray_in_use": draw(st.booleans()),
            "multi_model_pool": draw(st.booleans()),
            "models_change_often": draw(st.booleans()),
        },
        "hardware": {"pool_kind": pool, "nodes": nodes},
    }
    if draw(st.booleans()):
        spec["pinned_layout"] = {"tp": draw(st.sampled_from((1, 2, 4))), "pp": 1, "replicas": 1}
    return spec


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(spec_dict=valid_specs(), data=st.data())
def test_random_valid_plans_never_clash_and_dry_run_as_planned(spec_dict, data):
    try:
        spec = spec_from_dict(spec_dict)
    except SpecError:
        assume(False)  # e.g. a pinned TP that does not divide the heads
    result = plan(spec)
    assume(result.recommendation.route != "none")
    assert result.configs["refused"] == []
    pool = [c for c in (*result.candidates, result.pinned) if c is not None and c.hosts]
    chosen = data.draw(st.sampled_from(pool))
    layout = BundleLayout.from_candidate(chosen)
    variant = data.draw(st.sampled_from(variants(layout)))
    if len(chosen.hosts) != chosen.replicas:
        with pytest.raises(BundleClash):
            build_bundle(spec, layout, spec.hardware.nodes, variant)
        return
    bundle = build_bundle(spec, layout, spec.hardware.nodes, variant)
    with tempfile.TemporaryDirectory() as tmp:
        calls = dry_run(bundle, Path(tmp) / "run")
    assert_dry_run_matches_plan(calls, bundle, layout, spec.hardware.nodes, variant)


# ---------------------------------------------------------------- hostile input (#15 item 1)

HOSTILE = st.text(
    alphabet=st.sampled_from(
        [*string.ascii_letters[:6], *"019.-_/:@", *" \t\n\r;|&$`'\"\\(){}<>*?!#~=%,", "é", "\u2028"]
    ),
    min_size=1,
    max_size=24,
)
FIELDS = {
    "hardware.nodes[0].hostname": lambda s, v: s["hardware"]["nodes"][0].update(hostname=v),
    "hardware.nodes[0].address": lambda s, v: s["hardware"]["nodes"][0].update(address=v),
    "hardware.nodes[0].nics[0].name": lambda s, v: s["hardware"]["nodes"][0]["nics"][0].update(
        name=v
    ),
    "model.hf_repo": lambda s, v: s.update(
        model={"hf_config": LLAMA_8B_CONFIG, "name": "custom", "hf_repo": v}
    ),
    "model.slug": lambda s, v: s.update(model={"hf_config": LLAMA_8B_CONFIG, "slug": v}),
    "vllm_image": lambda s, v: s.update(vllm_image=v),
}


def _two_node_spec():
    return {
        "model": "qwen2.5-32b",
        "workload": {"concurrency": 32},
        "hardware": {
            "nodes": [
                {
                    "hostname": f"n{i}",
                    "address": f"10.9.0.{i + 1}",
                    "gpu": "a100-80g-sxm",
                    "gpu_count": 4,
                    "nics": [{"name": "eth1", "speed_gbps": 25}],
                }
                for i in range(2)
            ]
        },
    }


def test_a_newline_in_a_host_name_is_refused_naming_the_field():
    spec = _two_node_spec()
    spec["hardware"]["nodes"][0]["hostname"] = "n0\ntouch /tmp/PWNED_HOST"
    with pytest.raises(SpecError) as err:
        spec_from_dict(spec)
    assert "hardware.nodes[0].hostname" in err.value.errors


def test_an_nginx_directive_in_an_address_is_refused_naming_the_field():
    spec = _two_node_spec()
    spec["hardware"]["nodes"][1]["address"] = "10.9.0.2:8000;}\nserver { listen 9; }#"
    with pytest.raises(SpecError) as err:
        spec_from_dict(spec)
    assert "hardware.nodes[1].address" in err.value.errors


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(field=st.sampled_from(sorted(FIELDS)), value=HOSTILE)
def test_hostile_identifiers_are_refused_or_need_no_quoting(field, value):
    spec_dict = _two_node_spec()
    FIELDS[field](spec_dict, value)
    try:
        spec = spec_from_dict(spec_dict)
    except SpecError as exc:
        errors = exc.errors
    else:
        errors = {}
    if errors:
        assert field in errors  # refused, and the error names the field
        return
    # Accepted: the value is one plain shell word, and no Nginx/YAML metacharacter.
    assert shlex.quote(value) == value or field == "model.hf_repo"
    assert not set(value) & set(" \t\n\r;|&$`'\"\\(){}<>*?!#~=,%\u2028")
    result = plan(spec)
    bundle = result.configs["bundle"]
    assert bundle is not None, result.configs["refused"]  # an accepted value gets its bundle
    scripts = {name: text for name, text in bundle["files"].items() if name.endswith(".sh")}
    assert scripts
    for name, text in scripts.items():
        proc = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True)
        assert proc.returncode == 0, (name, proc.stderr)


TOKENS = st.lists(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
        min_size=0,
        max_size=20,
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=TOKENS, gpus=st.sampled_from(((0,), (0, 1), (2, 3, 4, 5))))
def test_rendered_commands_keep_every_token_unchanged(tokens, gpus):
    """Whatever a token holds, the quoted script gives the process exactly that argv."""
    argv = ("vllm", "serve", *tokens)
    proc = Process(
        host="n0",
        name="vllm-r0",
        kind=ProcessKind.VLLM,
        gpus=gpus,
        ports=(8000,),
        container="serveplan-vllm-r0-n0",
        argv=argv,
        env=(("CUDA_VISIBLE_DEVICES", ",".join(map(str, gpus))),),
    )
    host = HostAllocation(host="n0", address="n0", usable_gpus=8, processes=(proc,))
    script = render_start(
        host, [proc], image="vllm/vllm-openai:v0.32.0", usage="u", serve_app=False
    )
    syntax = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        stubs = write_stubs(root)
        record = root / "calls"
        record.mkdir()
        unpack({"launch-n0.sh": script, ".env": ""}, root / "hosts" / "n0")
        for docker in (False, True):
            done = run_script(root, "n0", "launch-n0.sh", docker=docker, record=record, stubs=stubs)
            assert done.returncode == 0, done.stderr
            # Host mode starts the process through systemd-run (its stub runs the command).
            calls = read_calls(record, "launch-n0.sh")
            (call,) = [c for c in calls if c.cmd == ("docker" if docker else "vllm")]
            if docker:
                assert call.argv[-len(argv) + 1 :] == argv[1:]
                assert call.argv[call.argv.index("--gpus") + 1] == '"device={}"'.format(
                    ",".join(map(str, gpus))
                )
            else:
                assert (call.cmd, *call.argv) == argv
                assert call.env["CUDA_VISIBLE_DEVICES"] == ",".join(map(str, gpus))


# Random text is accepted mostly when short ("0", "a"); identifier-shaped text, sometimes with a
# newline, space or shell metacharacter at the end, tries the near misses ("gpu01\n").
IDENTIFIER_LIKE = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"[A-Za-z0-9._:/@+-]{1,40}(\n| |;|\$\(x\)|'|)", fullmatch=True),
)


@given(IDENTIFIER_LIKE)
def test_every_accepted_identifier_is_one_plain_shell_word(value):
    for check in (
        identifiers.is_hostname,
        identifiers.is_address,
        identifiers.is_interface_name,
        identifiers.is_model_ref,
        identifiers.is_image_ref,
        identifiers.is_name,
    ):
        if check(value):
            assert shlex.quote(value) == value
            assert not set(value) & set(" \t\n\r;|&$`'\"\\(){}<>*?!#~=,%")
