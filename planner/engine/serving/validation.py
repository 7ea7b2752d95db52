"""The serving model's error on published runs, by load level and GPU generation.

Reads the run fixtures (tests/planner/engine/fixtures/serving_runs.json and
serving_load_runs.json), replays each run (replay.py) and reports the mean absolute % error of
TPOT, TTFT and output tok/s per group. Used by bench/eval_serving.py and by the test that holds
the held-out error to its thresholds (tests/planner/engine/test_serving_validation.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from catalog.data import load_gpus
from catalog.generations import pre_ampere
from planner.engine.assumptions import DEFAULT_ASSUMPTIONS
from planner.engine.serving.host import EngineEra, engine_era
from planner.engine.serving.kernels import gpu_generation
from planner.engine.serving.predict import Prediction
from planner.engine.serving.replay import replay

# (upper bound of requests in flight, label): the load levels.
LOAD_LEVELS = ((8, "<= 8"), (64, "9-64"), (256, "65-256"), (math.inf, "> 256"))
METRICS = ("tpot", "ttft", "tok_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunError:
    """One run's relative errors (None: not measured or not comparable)."""

    run_id: str
    split: str
    in_flight: float
    generation: str
    arrival: str
    engine: EngineEra
    source: str  # who published the run (source_of)
    tpot: float | None
    ttft: float | None
    tok_s: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupError:
    """Mean absolute % error of one group of runs, per metric, with how many runs each has."""

    group: str
    runs: int
    tpot_pct: float | None
    tpot_runs: int
    ttft_pct: float | None
    ttft_runs: int
    tok_s_pct: float | None
    tok_s_runs: int


def load_runs(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Return the runs of the fixture files, each with its inline model config when it has one."""
    runs = []
    for path in paths:
        doc = json.loads(path.read_text())
        configs = {slug: entry["config"] for slug, entry in doc.get("hf_configs", {}).items()}
        for run in doc["runs"]:
            if run["model_slug"] in configs:
                run = {**run, "hf_config": configs[run["model_slug"]]}
            runs.append(run)
    return runs


def in_flight(run: Mapping[str, Any]) -> float:
    """Return the requests in flight of a run's load: the loop's, the burst's, or rate × E2E
    (at most the run's prompts)."""
    load, m = run["load"], run["measured"]
    if load["arrival"] == "closed":
        return float(load["concurrency"])
    if load["arrival"] == "burst":
        return float(load.get("burst_size") or load["num_prompts"])
    out = load.get("output_tokens", 1)
    e2e_s = (m.get("ttft_mean_ms", 0.0) + m.get("tpot_mean_ms", 0.0) * max(out - 1, 0)) / 1e3
    # Little's law, but a run of n prompts never has more than n in flight.
    prompts = float(load.get("num_prompts") or math.inf)
    return min(float(load["request_rate_per_s"]) * e2e_s, prompts)


def source_of(url: str) -> str:
    """Return who published a run: a GitHub repository (owner/name), or else the site's host.

    Two pages of one repository or blog share their machines and methods, so a held-out run
    from a source that also gave calibration runs is not out of sample in the same way."""
    parts = urlsplit(url)
    path = [p for p in parts.path.split("/") if p]
    if parts.hostname == "github.com" and len(path) >= 2:
        return f"github.com/{path[0]}/{path[1]}".lower()
    return (parts.hostname or url).lower()


def load_level(flight: float) -> str:
    """Return the label of the load level `flight` requests in flight fall in."""
    return next(label for bound, label in LOAD_LEVELS if flight <= bound)


def run_error(run: Mapping[str, Any], pred: Prediction | None = None) -> RunError:
    """Return the relative errors of `pred` (by default the replay of `run`) against what
    `run` measured."""
    if pred is None:
        pred = replay(run)
    m = run["measured"]
    gpu = load_gpus()[run["gpu"]]

    def rel(pred_value: float, key: str) -> float | None:
        measured = m.get(key)
        return pred_value / measured - 1 if measured else None

    ttft = rel(pred.ttft_mean_ms, "ttft_mean_ms") if run.get("ttft_comparable", True) else None
    # A run that published only the median TPOT is compared on the median.
    tpot = rel(pred.tpot_mean_ms, "tpot_mean_ms")
    if tpot is None:
        tpot = rel(pred.tpot_p50_ms, "tpot_median_ms")
    return RunError(
        run_id=run["id"],
        split=run["split"],
        in_flight=in_flight(run),
        generation=gpu_generation(gpu.slug, gpu.fp8_support),
        arrival=run["load"]["arrival"],
        engine=engine_era(
            run.get("vllm_version") or DEFAULT_ASSUMPTIONS.vllm_version,
            pre_ampere=pre_ampere(gpu.slug),
        ),
        source=source_of(run["source_url"]),
        tpot=tpot,
        ttft=ttft,
        tok_s=rel(pred.output_tok_s, "output_tok_s"),
    )


def _mae(values: list[float]) -> float | None:
    return 100 * sum(abs(v) for v in values) / len(values) if values else None


def group_error(name: str, errors: list[RunError]) -> GroupError:
    """Return the mean absolute % errors of `errors`."""
    per = {k: [v for e in errors if (v := getattr(e, k)) is not None] for k in METRICS}
    return GroupError(
        group=name,
        runs=len(errors),
        tpot_pct=_mae(per["tpot"]),
        tpot_runs=len(per["tpot"]),
        ttft_pct=_mae(per["ttft"]),
        ttft_runs=len(per["ttft"]),
        tok_s_pct=_mae(per["tok_s"]),
        tok_s_runs=len(per["tok_s"]),
    )


def validation_table(errors: list[RunError], split: str = "validation") -> list[GroupError]:
    """Return the errors of `split`'s runs: all, by load level, by GPU generation, by arrival,
    by engine era (V0 before vLLM 0.8) and, for held-out runs, by whether their source also gave
    calibration runs (as far as `errors` tell)."""
    mine = [e for e in errors if e.split == split]
    rows = [group_error(f"all {split}", mine)]
    for _, label in LOAD_LEVELS:
        group = [e for e in mine if load_level(e.in_flight) == label]
        if group:
            rows.append(group_error(f"in flight {label}", group))
    for generation in sorted({e.generation for e in mine}):
        rows.append(group_error(generation, [e for e in mine if e.generation == generation]))
    for arrival in sorted({e.arrival for e in mine}):
        rows.append(group_error(f"{arrival} load", [e for e in mine if e.arrival == arrival]))
    for era in EngineEra:
        group = [e for e in mine if e.engine == era]
        if group:
            rows.append(group_error(f"engine {era}", group))
    if split != "calibration":
        calibrated = {e.source for e in errors if e.split == "calibration"}
        for label, seen in (
            ("source also calibrated on", True),
            ("source never calibrated on", False),
        ):
            group = [e for e in mine if (e.source in calibrated) == seen]
            if group:
                rows.append(group_error(label, group))
    return rows


def markdown(rows: list[GroupError]) -> str:
    """Return `rows` as a Markdown table (MAE %, runs in brackets)."""

    def cell(pct: float | None, n: int) -> str:
        return "–" if pct is None else f"{pct:.1f} ({n})"

    lines = ["| group | runs | TPOT % | TTFT % | output tok/s % |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r.group} | {r.runs} | {cell(r.tpot_pct, r.tpot_runs)} | "
            f"{cell(r.ttft_pct, r.ttft_runs)} | {cell(r.tok_s_pct, r.tok_s_runs)} |"
        )
    return "\n".join(lines)
