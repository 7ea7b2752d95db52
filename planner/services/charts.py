"""Plotly figures of a plan result, built server-side as plain JSON-able dicts.

The page passes each figure through `json_script` and static/planner/charts.js draws it; every
number comes from the engine's result.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from planner.services.compare import best_candidate

COLORS = {
    "weights": "#3b5bdb",
    "activation": "#f08c00",
    "overhead": "#868e96",
    "kv": "#2f9e44",
    "free": "#dee2e6",
    "usable": "#c92a2a",
    "best": "#c92a2a",
    "fits": "#3b5bdb",
    "rejected": "#adb5bd",
    "nvlink": "#2f9e44",
    "network": "#e8590c",
}

_MAX_BARS = 12


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> dict[str, Any]:
    """Return a layout; the title is shown as the card's heading, the legend above the plot."""
    layout: dict[str, Any] = {
        "meta": {"title": title},
        "xaxis": {"title": {"text": x_title}, "automargin": True, "tickangle": -35},
        "yaxis": {"title": {"text": y_title}, "automargin": True},
        "margin": {"l": 60, "r": 20, "t": 10, "b": 40},
        "legend": {"orientation": "h", "x": 0, "y": 1.02, "yanchor": "bottom"},
        "height": 420,
    }
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(layout.get(key), dict):
            layout[key] = {**layout[key], **value}
        else:
            layout[key] = value
    return layout


def _shown_candidates(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Return the best candidate first, then the others by score (at most _MAX_BARS)."""
    cands = [dict(c) for c in result.get("candidates") or []]
    best_id = (result.get("recommendation") or {}).get("candidate_id")
    cands.sort(key=lambda c: (c.get("id") != best_id, -float(c.get("score") or 0)))
    return cands[:_MAX_BARS]


def _label(c: Mapping[str, Any], *, dtype: bool = True) -> str:
    label = f"TP{c['tp']}×PP{c['pp']}×{c['replicas']}"
    return f"{label} {c.get('weight_dtype', '')}".strip() if dtype else label


def _needs_dtype(cands: list[dict[str, Any]]) -> bool:
    return len({c.get("weight_dtype") for c in cands}) > 1


def memory_figure(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return a stacked bar of memory per GPU for each candidate against the usable memory."""
    cands = _shown_candidates(result)
    x = [_label(c, dtype=_needs_dtype(cands)) for c in cands]
    mem = [c.get("memory") or {} for c in cands]
    parts = [
        ("weights_gib", _("weights"), COLORS["weights"]),
        ("activation_peak_gib", _("activation peak"), COLORS["activation"]),
        ("overhead_gib", _("non-torch + CUDA graphs"), COLORS["overhead"]),
        ("kv_budget_gib", _("KV cache"), COLORS["kv"]),
        ("free_gib", _("outside the utilization"), COLORS["free"]),
    ]
    data: list[dict[str, Any]] = []
    for key, name, color in parts:
        if key == "overhead_gib":
            y = [float(m.get("non_torch_gib", 0)) + float(m.get("cuda_graph_gib", 0)) for m in mem]
        elif key == "kv_budget_gib":
            y = [max(0.0, float(m.get(key, 0))) for m in mem]
        else:
            y = [float(m.get(key, 0)) for m in mem]
        data.append({"type": "bar", "name": str(name), "x": x, "y": y, "marker": {"color": color}})
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": _("usable memory (visible × utilization)"),
            "x": x,
            "y": [float(m.get("requested_gib", 0)) for m in mem],
            "marker": {"symbol": "line-ew-open", "size": 28, "color": COLORS["usable"]},
        }
    )
    return {
        "data": data,
        "layout": _layout(
            _("Memory per GPU by candidate"),
            _("candidate layout"),
            _("GiB per GPU"),
            barmode="stack",
        ),
    }


def throughput_figure(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return candidates on output throughput vs TTFT (the recommendation highlighted)."""
    best_id = (result.get("recommendation") or {}).get("candidate_id")
    groups: dict[str, list[dict[str, Any]]] = {"best": [], "fits": [], "rejected": []}
    for c in result.get("candidates") or []:
        key = "best" if c.get("id") == best_id else ("fits" if c.get("fits") else "rejected")
        groups[key].append(c)
    names = {
        "best": _("recommended"),
        "fits": _("fits"),
        "rejected": _("does not fit"),
    }
    data = [
        {
            "type": "scatter",
            "mode": "markers+text" if key == "best" else "markers",
            "name": str(names[key]),
            "x": [float(c.get("ttft_ms") or 0) for c in items],
            "y": [float(c.get("output_throughput_tok_s") or 0) for c in items],
            "text": [_label(c) for c in items],
            "textposition": "middle right",
            "hovertemplate": "%{text}<br>TTFT %{x:.0f} ms<br>%{y:.0f} tok/s<extra></extra>",
            "marker": {"size": 14 if key == "best" else 9, "color": COLORS[key]},
        }
        for key, items in groups.items()
        if items
    ]
    return {
        "data": data,
        "layout": _layout(
            _("Candidates: output throughput vs time to first token"),
            _("TTFT (ms)"),
            _("output tok/s at the target load"),
        ),
    }


def _is_network(link: str) -> bool:
    text = (link or "").lower()
    return bool(text) and not any(k in text for k in ("nvlink", "nvswitch", "pcie"))


def communication_figure(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return communication time per decode step by link kind (NVLink/PCIe vs network)."""
    # Communication per step does not depend on the number of replicas: one bar per (TP, PP).
    seen: set[tuple[Any, ...]] = set()
    cands = []
    for c in sorted(
        result.get("candidates") or [], key=lambda c: float(c.get("comm_per_decode_step_ms") or 0)
    ):
        key = (c.get("tp"), c.get("pp"), c.get("weight_dtype"))
        if int(c.get("gpus_per_replica") or 1) > 1 and key not in seen:
            seen.add(key)
            cands.append(c)
    cands = cands[:14]
    show_dtype = _needs_dtype(cands)
    x = [
        f"TP{c['tp']}×PP{c['pp']}"
        + (f" {c.get('weight_dtype')}" if show_dtype else "")
        + (
            _(" (%(n)s nodes)") % {"n": c["nodes_per_replica"]}
            if c.get("nodes_per_replica", 1) > 1
            else ""
        )
        for c in cands
    ]
    inside: list[float] = []
    across: list[float] = []
    for c in cands:
        comm = float(c.get("comm_per_decode_step_ms") or 0)
        # The engine reports one figure per step; attribute it to the slowest link it crosses.
        network = _is_network(c.get("tp_link", "")) or _is_network(c.get("pp_link", ""))
        inside.append(0.0 if network else comm)
        across.append(comm if network else 0.0)
    data = [
        {
            "type": "bar",
            "name": _("inside a node (NVLink/PCIe)"),
            "x": x,
            "y": inside,
            "marker": {"color": COLORS["nvlink"]},
        },
        {
            "type": "bar",
            "name": _("across nodes (network)"),
            "x": x,
            "y": across,
            "marker": {"color": COLORS["network"]},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "name": _("compute per decode step"),
            "x": x,
            "y": [float(c.get("decode_compute_ms") or 0) for c in cands],
            "marker": {"symbol": "diamond", "size": 10, "color": "#212529"},
        },
    ]
    values = [v for v in inside + across + data[2]["y"] if v > 0]
    y_range = [math.log10(min(values) / 2), math.log10(max(values) * 1.5)] if values else None
    return {
        "data": data,
        "layout": _layout(
            _("Communication time per decode step by link"),
            _("candidate layout"),
            _("ms per decode step"),
            barmode="stack",
            yaxis={"title": {"text": _("ms per decode step")}, "type": "log", "range": y_range},
        ),
    }


def _context_points(max_context: int) -> list[int]:
    points, ctx = [], 1024
    while ctx < max_context:
        points.append(ctx)
        ctx *= 2
    points.append(max_context)
    return points


def kv_capacity_figure(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return concurrent sequences that fit vs context length, the chosen context marked."""
    model = result.get("model") or {}
    chosen = int(model.get("max_model_len") or 8192)
    limit = int(model.get("max_position_embeddings") or 0) or max(chosen * 4, 32768)
    block = int((result.get("assumptions") or {}).get("block_size_tokens") or 16)
    xs = _context_points(max(limit, chosen))
    best = best_candidate(result)
    shown = [best] if best else []
    shown += [c for c in _shown_candidates(result) if c.get("fits") and c is not best][:3]
    seen: set[str] = set()
    data: list[dict[str, Any]] = []
    top = 1.0
    for c in shown:
        if not c or c.get("id") in seen:
            continue
        seen.add(c["id"])
        kv_tokens = int(c.get("kv_tokens_per_replica") or 0) * int(c.get("replicas") or 1)
        ys = [kv_tokens // (math.ceil(x / block) * block) for x in xs]
        top = max(top, *ys) if ys else top
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _label(c, dtype=_needs_dtype(shown)),
                "x": xs,
                "y": ys,
                "line": {"width": 3 if c.get("id") == best.get("id") else 1.5},
            }
        )
    layout = _layout(
        _("KV capacity: concurrent sequences vs context length"),
        _("context length (tokens)"),
        _("sequences that fit (all replicas)"),
        xaxis={"title": {"text": _("context length (tokens)")}, "type": "log", "automargin": True},
        yaxis={"title": {"text": _("sequences")}, "type": "log", "automargin": True},
        shapes=[
            {
                "type": "line",
                "x0": chosen,
                "x1": chosen,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"color": COLORS["usable"], "dash": "dash"},
            }
        ],
        annotations=[
            {
                "x": math.log10(chosen),
                "yref": "paper",
                "y": 1.02,
                "text": _("max_model_len %(tokens)s") % {"tokens": chosen},
                "showarrow": False,
                "font": {"color": COLORS["usable"]},
            }
        ],
    )
    return {"data": data, "layout": layout}


def result_figures(result: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Return every chart of the result page keyed by its element id."""
    return {
        "chart-memory": memory_figure(result),
        "chart-throughput": throughput_figure(result),
        "chart-communication": communication_figure(result),
        "chart-kv": kv_capacity_figure(result),
    }
