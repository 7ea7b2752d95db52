"""What a reader can open behind each rule the planner applies: public documentation pages and
papers, never the project's own notes. Titles stay in English (they name the page)."""

from __future__ import annotations

from dataclasses import dataclass

from planner.presentation.template_types import Rule


@dataclass(frozen=True, slots=True)
class PublicRef:
    title: str
    url: str


VLLM_PARALLELISM = PublicRef(
    "vLLM docs: Parallelism and Scaling",
    "https://docs.vllm.ai/en/latest/serving/parallelism_scaling/",
)
VLLM_MEMORY = PublicRef(
    "vLLM docs: Conserving Memory",
    "https://docs.vllm.ai/en/latest/configuration/conserving_memory/",
)
VLLM_OPTIMIZATION = PublicRef(
    "vLLM docs: Optimization and Tuning (chunked prefill, preemption)",
    "https://docs.vllm.ai/en/latest/configuration/optimization/",
)
VLLM_DOCKER = PublicRef(
    "vLLM docs: Using Docker", "https://docs.vllm.ai/en/latest/deployment/docker/"
)
VLLM_PREFIX_CACHING = PublicRef(
    "vLLM docs: Automatic Prefix Caching",
    "https://docs.vllm.ai/en/latest/features/automatic_prefix_caching/",
)
PAGED_ATTENTION = PublicRef(
    "Kwon et al., Efficient Memory Management for LLM Serving with PagedAttention (2023)",
    "https://arxiv.org/abs/2309.06180",
)
MEGATRON = PublicRef(
    "Shoeybi et al., Megatron-LM: Training Multi-Billion Parameter Language Models Using Model "
    "Parallelism (2019)",
    "https://arxiv.org/abs/1909.08053",
)
NCCL_ENV = PublicRef(
    "NVIDIA NCCL docs: Environment Variables",
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html",
)
RAY_PLACEMENT = PublicRef(
    "Ray docs: Placement Groups",
    "https://docs.ray.io/en/latest/ray-core/scheduling/placement-group.html",
)
RAY_SERVE_AUTOSCALING = PublicRef(
    "Ray docs: Ray Serve Autoscaling", "https://docs.ray.io/en/latest/serve/autoscaling-guide.html"
)
RAY_ACTOR_FAULTS = PublicRef(
    "Ray docs: Actor Fault Tolerance",
    "https://docs.ray.io/en/latest/ray-core/fault_tolerance/actors.html",
)
NGINX_UPSTREAM = PublicRef(
    "nginx docs: ngx_http_upstream_module (least_conn, max_fails)",
    "https://nginx.org/en/docs/http/ngx_http_upstream_module.html",
)

RULE_REFERENCES: dict[Rule, tuple[PublicRef, ...]] = {
    Rule.WORDS: (VLLM_PARALLELISM, MEGATRON),
    Rule.NUMBERS: (VLLM_MEMORY, PAGED_ATTENTION, MEGATRON),
    Rule.ROUTES: (VLLM_PARALLELISM,),
    Rule.ROUTE_A: (VLLM_PARALLELISM, NGINX_UPSTREAM),
    Rule.ROUTE_B: (VLLM_PARALLELISM, NCCL_ENV),
    Rule.ROUTE_C: (RAY_SERVE_AUTOSCALING, RAY_ACTOR_FAULTS),
    Rule.SIGNALS: (VLLM_PARALLELISM, RAY_SERVE_AUTOSCALING),
    Rule.PLACEMENT: (RAY_PLACEMENT,),
    Rule.PITFALLS: (NCCL_ENV, VLLM_DOCKER, VLLM_PREFIX_CACHING),
    Rule.RECORD: (),
    Rule.SCENARIOS: (VLLM_OPTIMIZATION,),
}


def references(rule: Rule) -> tuple[PublicRef, ...]:
    """Return the public pages and papers behind `rule`."""
    return RULE_REFERENCES.get(rule, ())
