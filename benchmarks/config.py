"""A run's configuration: read from a request (or the plan's workload), checked against the caps.

Every error names its field, so the API answers 400 with it and nothing is saved.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from benchmarks.loadgen import Arrival, Slo, Workload

FIELDS = (
    "arrival", "requests", "input_tokens", "output_tokens", "input_tokens_sd", "output_tokens_sd",
    "shared_prefix_fraction", "concurrency", "request_rate_rps", "ttft_slo_ms", "tpot_slo_ms",
    "e2el_slo_ms", "max_duration_s",
)  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class RunConfig:
    arrival: str
    requests: int
    input_tokens: int
    output_tokens: int
    input_tokens_sd: float
    output_tokens_sd: float
    shared_prefix_fraction: float
    concurrency: list[int]  # one level per value: a sweep when there are several
    request_rate_rps: float | None
    ttft_slo_ms: float | None
    tpot_slo_ms: float | None
    e2el_slo_ms: float | None
    max_duration_s: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def workloads(self) -> list[Workload]:
        slo = Slo(ttft_ms=self.ttft_slo_ms, tpot_ms=self.tpot_slo_ms, e2el_ms=self.e2el_slo_ms)
        levels: list[int | None] = list(self.concurrency) or [None]
        return [
            Workload(
                requests=self.requests,
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                input_tokens_sd=self.input_tokens_sd,
                output_tokens_sd=self.output_tokens_sd,
                shared_prefix_fraction=self.shared_prefix_fraction,
                arrival=Arrival(self.arrival),
                concurrency=level,
                request_rate_rps=self.request_rate_rps,
                slo=slo,
            )
            for level in levels
        ]


def plan_defaults(workload: Any, *, share: int = 1) -> dict[str, Any]:
    """Return a configuration from a plan's workload; `share` replicas split its load."""
    share = max(share, 1)
    concurrency = max(1, math.ceil(workload.concurrency / share))
    rate = workload.request_rate_per_s / share if workload.request_rate_per_s else None
    requests = workload.num_requests or min(max(4 * concurrency, 32), 500)
    if workload.arrival == "burst":
        requests = workload.num_requests or math.ceil((workload.burst_size or 32) / share)
    return {
        "arrival": workload.arrival
        if workload.arrival in Arrival.__members__.values()
        else "closed",
        "requests": requests,
        "input_tokens": workload.avg_input_tokens,
        "output_tokens": workload.avg_output_tokens,
        "input_tokens_sd": workload.input_tokens_sd,
        "output_tokens_sd": workload.output_tokens_sd,
        "shared_prefix_fraction": workload.shared_prefix_fraction,
        "concurrency": [concurrency] if workload.arrival == "closed" else None,
        "request_rate_rps": rate,
        "ttft_slo_ms": workload.ttft_slo_ms,
        "tpot_slo_ms": workload.itl_slo_ms,
    }


def _number(
    errors: dict[str, str], data: Mapping[str, Any], name: str, *, low: float, high: float,
    integer: bool = False, default: Any = None,
) -> Any:  # fmt: skip
    raw = data.get(name, default)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        errors[name] = _("Enter a number.")
        return None
    if not math.isfinite(value) or (integer and value != int(value)):
        errors[name] = _("Enter a whole number.") if integer else _("Enter a finite number.")
        return None
    if not low <= value <= high:
        errors[name] = _("Must be between %(low)s and %(high)s.") % {"low": low, "high": high}
        return None
    return int(value) if integer else value


def _levels(errors: dict[str, str], raw: Any) -> list[int]:
    if raw in (None, ""):
        return [1]
    if isinstance(raw, str):
        raw = [p for p in raw.replace(",", " ").split() if p]
    if isinstance(raw, int | float):
        raw = [raw]
    if not isinstance(raw, list | tuple) or not raw:
        errors["concurrency"] = _("Give one or more numbers of requests in flight.")
        return []
    cap, most = settings.BENCHMARK_MAX_CONCURRENCY, settings.BENCHMARK_MAX_LEVELS
    out: list[int] = []
    for item in raw:
        try:
            value = int(str(item))
        except ValueError:
            errors["concurrency"] = _("%(value)s is not a whole number.") % {"value": item}
            return []
        if not 1 <= value <= cap:
            errors["concurrency"] = _("Each level must be between 1 and %(cap)s.") % {"cap": cap}
            return []
        out.append(value)
    if len(out) > most:
        errors["concurrency"] = _("At most %(most)s levels in a sweep.") % {"most": most}
    return sorted(set(out))


def parse_config(
    data: Mapping[str, Any], *, defaults: Mapping[str, Any] | None = None
) -> RunConfig:
    """Return the checked configuration (the plan's values fill what `data` leaves out)."""
    merged = {**(defaults or {}), **{k: v for k, v in data.items() if v not in (None, "")}}
    unknown = sorted(set(data) - set(FIELDS))
    errors: dict[str, str] = {}
    if unknown:
        errors[unknown[0]] = _("Unknown field; allowed: %(fields)s.") % {
            "fields": ", ".join(FIELDS)
        }
    arrival = str(merged.get("arrival") or "closed")
    if arrival not in Arrival.__members__.values():
        errors["arrival"] = _("Choose closed, poisson or burst.")
    s = settings
    values = {
        "requests": _number(errors, merged, "requests", low=1, high=s.BENCHMARK_MAX_REQUESTS,
                            integer=True, default=None),
        "input_tokens": _number(errors, merged, "input_tokens", low=1,
                                high=s.BENCHMARK_MAX_PROMPT_TOKENS, integer=True),
        "output_tokens": _number(errors, merged, "output_tokens", low=1,
                                 high=s.BENCHMARK_MAX_OUTPUT_TOKENS, integer=True),
        "input_tokens_sd": _number(errors, merged, "input_tokens_sd", low=0,
                                   high=s.BENCHMARK_MAX_PROMPT_TOKENS, default=0.0),
        "output_tokens_sd": _number(errors, merged, "output_tokens_sd", low=0,
                                    high=s.BENCHMARK_MAX_OUTPUT_TOKENS, default=0.0),
        "shared_prefix_fraction": _number(errors, merged, "shared_prefix_fraction", low=0,
                                          high=1, default=0.0),
        "request_rate_rps": _number(errors, merged, "request_rate_rps", low=0.01, high=10_000),
        "ttft_slo_ms": _number(errors, merged, "ttft_slo_ms", low=0.001, high=3_600_000),
        "tpot_slo_ms": _number(errors, merged, "tpot_slo_ms", low=0.001, high=3_600_000),
        "e2el_slo_ms": _number(errors, merged, "e2el_slo_ms", low=0.001, high=3_600_000),
        "max_duration_s": _number(errors, merged, "max_duration_s", low=1,
                                  high=s.BENCHMARK_MAX_DURATION_S, integer=True,
                                  default=s.BENCHMARK_MAX_DURATION_S),
    }  # fmt: skip
    for name in ("requests", "input_tokens", "output_tokens"):
        if values[name] is None and name not in errors:
            errors[name] = _("Required (or link a plan whose workload gives it).")
    # A Poisson arrival is uncapped unless levels are given; a closed loop needs one (1).
    uncapped = arrival != "closed" and merged.get("concurrency") in (None, "", [])
    levels = [] if uncapped else _levels(errors, merged.get("concurrency"))
    if (
        arrival == "poisson"
        and values["request_rate_rps"] is None
        and "request_rate_rps" not in errors
    ):
        errors["request_rate_rps"] = _("A Poisson arrival needs a request rate.")
    if (
        arrival == "burst"
        and values["requests"]
        and values["requests"] > s.BENCHMARK_MAX_CONCURRENCY
    ):
        errors["requests"] = _("A burst sends every request at once: at most %(cap)s.") % {
            "cap": s.BENCHMARK_MAX_CONCURRENCY
        }
    if errors:
        raise ValidationError(errors)
    return RunConfig(arrival=arrival, concurrency=[] if arrival == "burst" else levels, **values)
