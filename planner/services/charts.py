"""Plotly figures of a plan result, built server-side as plain JSON-able dicts.

The page passes each figure through `json_script` and static/planner/charts.js draws it; every
number comes from the engine's result.
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.translation import gettext as _

from planner.engine.result import Candidate, PlanResult
from planner.presentation.shown import shown_speed

COLORS = {
    "weights": "#3b5bdb",
    "activation": "#f08c00",
    "overhead": "#868e96",
    "kv": "#2f9e44",
    "free": "#dee2e6",
    "usable": "#c92a2a",
    "best": "#c92a2a",
    "fits": "#3b5bdb",
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


def _shown_candidates(result: PlanResult) -> list[Candidate]:
    """Return the best candidate first, then the others by score (at most _MAX_BARS)."""
    best_id = result.recommendation.candidate_id
    cands = sorted(result.candidates, key=lambda c: (c.id != best_id, -c.score))
    return cands[:_MAX_BARS]


def _label(c: Candidate, *, dtype: bool = True) -> str:
    return f"{c.label} {c.weight_dtype}".strip() if dtype else c.label


def _needs_dtype(cands: list[Candidate]) -> bool:
    return len({c.weight_dtype for c in cands}) > 1


def memory_figure(result: PlanResult) -> dict[str, Any]:
    """Return a stacked bar of memory per GPU for each candidate against the usable memory."""
    cands = _shown_candidates(result)
    x = [_label(c, dtype=_needs_dtype(cands)) for c in cands]
    mem = [c.memory for c in cands]
    parts = [
        (_("weights"), COLORS["weights"], [m.weights_gib for m in mem]),
        (_("activation peak"), COLORS["activation"], [m.activation_peak_gib for m in mem]),
        (
            _("non-torch + CUDA graphs"),
            COLORS["overhead"],
            [m.non_torch_gib + m.cuda_graph_gib for m in mem],
        ),
        (_("KV cache"), COLORS["kv"], [max(0.0, m.kv_budget_gib) for m in mem]),
        (_("outside the utilization"), COLORS["free"], [m.free_gib for m in mem]),
    ]
    data: list[dict[str, Any]] = []
    for name, color, y in parts:
        data.append({"type": "bar", "name": str(name), "x": x, "y": y, "marker": {"color": color}})
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "name": _("usable memory (visible × utilization)"),
            "x": x,
            "y": [m.requested_gib for m in mem],
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


def throughput_figure(result: PlanResult) -> dict[str, Any]:
    """Return the simulated layouts on output throughput vs TTFT (the recommendation highlighted).

    Only the serving model's figures are plotted, the ones every page shows: the closed-form
    estimates of the other layouts only rank them. A layout that does not fit never starts.
    """
    best_id = result.recommendation.candidate_id
    groups: dict[str, list[Candidate]] = {"best": [], "fits": []}
    speeds = {}
    for c in result.candidates:
        speed = shown_speed(c, result)
        if speed is not None:
            speeds[c.id] = speed
            groups["best" if c.id == best_id else "fits"].append(c)
    names = {"best": _("recommended"), "fits": _("simulated")}
    data = [
        {
            "type": "scatter",
            "mode": "markers+text" if key == "best" else "markers",
            "name": str(names[key]),
            "x": [speeds[c.id].ttft_ms for c in items],
            "y": [speeds[c.id].output_tok_s for c in items],
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


def communication_figure(result: PlanResult) -> dict[str, Any]:
    """Return communication time per decode step by link kind (NVLink/PCIe vs network)."""
    # Communication per step does not depend on the number of replicas: one bar per (TP, PP).
    seen: set[tuple[Any, ...]] = set()
    cands = []
    timed = [c for c in result.candidates if c.comm_per_decode_step_ms is not None]
    for c in sorted(timed, key=lambda c: c.comm_per_decode_step_ms or 0.0):
        key = (c.tp, c.pp, c.weight_dtype)
        if c.gpus_per_replica > 1 and key not in seen:
            seen.add(key)
            cands.append(c)
    cands = cands[:14]
    show_dtype = _needs_dtype(cands)
    x = [
        f"TP{c.tp}×PP{c.pp}"
        + (f" {c.weight_dtype}" if show_dtype else "")
        + (_(" (%(n)s nodes)") % {"n": c.nodes_per_replica} if c.spans_nodes else "")
        for c in cands
    ]
    inside: list[float] = []
    across: list[float] = []
    for c in cands:
        comm = c.comm_per_decode_step_ms or 0.0
        # The engine reports one figure per step; attribute it to the slowest link it crosses.
        network = _is_network(c.tp_link) or _is_network(c.pp_link)
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
            "y": [c.decode_compute_ms or 0.0 for c in cands],
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


def kv_capacity_figure(result: PlanResult) -> dict[str, Any]:
    """Return concurrent sequences that fit vs context length, the chosen context marked."""
    chosen = result.model.max_model_len or 8192
    limit = max(chosen * 4, 32768)
    block = result.applied_assumptions.block_size_tokens
    xs = _context_points(max(limit, chosen))
    best = result.best
    shown = [best] if best else []
    shown += [c for c in _shown_candidates(result) if c.fits and c is not best][:3]
    seen: set[str] = set()
    data: list[dict[str, Any]] = []
    top = 1.0
    for c in shown:
        if c.id in seen:
            continue
        seen.add(c.id)
        kv_tokens = c.kv_tokens_per_replica * max(c.replicas, 1)
        ys = [kv_tokens // (math.ceil(x / block) * block) for x in xs]
        top = max(top, *ys) if ys else top
        data.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": _label(c, dtype=_needs_dtype(shown)),
                "x": xs,
                "y": ys,
                "line": {"width": 3 if c is best else 1.5},
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


def result_figures(result: PlanResult) -> dict[str, dict[str, Any]]:
    """Return every chart of the result page keyed by its element id."""
    return {
        "chart-memory": memory_figure(result),
        "chart-throughput": throughput_figure(result),
        "chart-communication": communication_figure(result),
        "chart-kv": kv_capacity_figure(result),
    }
