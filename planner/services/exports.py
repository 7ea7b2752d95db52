"""Exports of a plan: JSON, Markdown, and the config archive an operator unpacks on the nodes."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from planner.engine.result import PlanResult
from planner.presentation import messages
from planner.presentation.api import api_result
from planner.presentation.bands import markdown_row
from planner.presentation.numbers import amount
from planner.presentation.shown import ShownSpeed, band_sentence, shown_speed
from planner.presentation.verdict import recommendation_sentence
from planner.selectors import plan_result
from planner.services.bundles import BundleUnavailable, bundle_files, plan_bundle

ARCHIVE_ROOT = "serveplan-configs"


def plan_json(plan: Any) -> dict[str, Any]:
    """Return the plan snapshot as a JSON-able dict (spec, resolved input, full result)."""
    return {
        "public_id": str(plan.public_id),
        "title": plan.title,
        "author": plan.author.get_username() if plan.author_id else None,
        "created_at": plan.created_at.isoformat(),
        "engine_version": plan.engine_version,
        "rerun_of": str(plan.rerun_of.public_id) if plan.rerun_of_id else None,
        "spec": plan.spec,
        "engine_input": plan.engine_input,
        "result": api_result(plan_result(plan)),
    }


def config_files(result: PlanResult) -> dict[str, str]:
    """Return every file of the recommended bundle by its name in the archive, README first."""
    return bundle_files(result.configs.get("bundle"))


def config_archive(result: PlanResult, files: Mapping[str, str] | None = None) -> bytes:
    """Return a ZIP of a bundle (the recommended one unless `files` is given); scripts are
    executable."""
    buffer = io.BytesIO()
    chosen = config_files(result) if files is None else files
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in chosen.items():
            info = zipfile.ZipInfo(f"{ARCHIVE_ROOT}/{name}", date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name.endswith(".sh") else 0o644) << 16
            archive.writestr(info, text)
    return buffer.getvalue()


def plan_archive(
    plan: Any, candidate_id: str = "", variant: str = "", *, serveplan_url: str = ""
) -> tuple[bytes, str]:
    """Return (ZIP, file name) of a plan's bundle: the recommended one, or any candidate's.

    A variant without a candidate applies to the recommended candidate. The bundle is rebuilt
    from the plan's input with its playbook, which registers at `serveplan_url`. Raise
    BundleUnavailable (a message for the user) when there is no bundle to give.
    """
    result = plan_result(plan)
    if variant and not candidate_id and result.recommendation.fits:
        candidate_id = result.recommendation.candidate_id
    if candidate_id:
        files = plan_bundle(plan, candidate_id, variant, serveplan_url=serveplan_url)
        tag = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{candidate_id}-{variant}".strip("-"))
        name = f"serveplan-{plan.public_id}-{tag}.zip"
    else:
        files = config_files(result)
        if result.recommendation.fits:
            files = plan_bundle(
                plan, result.recommendation.candidate_id, serveplan_url=serveplan_url
            )
        name = f"serveplan-{plan.public_id}-configs.zip"
    if not files:
        refused = result.configs.get("refused") or []
        raise BundleUnavailable(
            _("This plan has no deployment bundle: %(why)s")
            % {"why": "; ".join(refused) or _("nothing fits the offered GPUs")},
            field="configs",
        )
    return config_archive(result, files), name


def _md_escape(value: Any) -> str:
    return str(value).replace("|", "\\|")


def _serving_markdown(result: PlanResult) -> list[str]:
    """Return the serving predictions section (each p50 with its ± band and the band's source)."""
    simulated = [c for c in result.candidates if c.serving is not None]
    if not simulated:
        return []
    head = (
        _("layout"),
        _("TTFT p50 ms"),
        _("TTFT p95 ms"),
        _("TPOT p50 ms"),
        _("TPOT p95 ms"),
        _("Output tok/s"),
        _("band source"),
    )
    return [
        "",
        ("## " + _("Predicted serving under your load")),
        "",
        "| " + " | ".join(head) + " |",
        "|---|---|---|---|---|---|---|",
        *(markdown_row(c.label, c.serving, c.gpu) for c in simulated if c.serving is not None),
    ]


def _speed_cells(speed: ShownSpeed | None) -> tuple[str, str]:
    """Return a layout's output tok/s and TTFT p50 with their bands ("—": not simulated)."""
    if speed is None:
        return "—", "—"
    return speed.tok_s_text(), speed.ttft_text()


def _speed_rows(speed: ShownSpeed | None) -> list[str]:
    """Return the key-figure rows of the recommendation's speed, the figures the page shows."""
    if speed is None:
        return []
    rows = [
        (_("Output throughput (tok/s)"), speed.tok_s_text()),
        (_("TTFT p50 (ms)"), speed.ttft_text()),
        (_("TTFT p95 (ms)"), amount(speed.ttft_p95_ms) if speed.ttft_p95_ms is not None else "—"),
        (_("Time per output token p50 (ms)"), speed.tpot_text()),
    ]
    out = [f"| {name} | {value} |" for name, value in rows]
    note = band_sentence(speed)
    return [*out, "", note] if note else out


def plan_markdown(plan: Any) -> str:
    """Return the plan as a Markdown document (the recommendation, reasons, candidates, configs)."""
    result = plan_result(plan)
    rec = result.recommendation
    best = result.best
    out = [
        f"# {plan.title}",
        "",
        _("Plan %(id)s by %(author)s, %(created)s, engine %(version)s.")
        % {
            "id": plan.public_id,
            "author": plan.author.get_username(),
            "created": plan.created_at.strftime("%Y-%m-%d %H:%M UTC"),
            "version": plan.engine_version,
        },
        "",
        ("## " + _("Recommendation")),
        "",
        recommendation_sentence(result, plan.engine_input),
        "",
        ("## " + _("Reasons")),
        "",
    ]
    out += [f"- {messages.with_citation(m)}" for m in rec.reasons]
    if best:
        out += [
            "",
            ("## " + _("Key figures")),
            "",
            ("| " + _("figure") + " | " + _("value") + " |"),
            "|---|---|",
            ("| " + _("Weights per GPU (GiB)") + f" | {best.memory.weights_gib} |"),
            ("| " + _("KV budget per GPU (GiB)") + f" | {best.memory.kv_budget_gib} |"),
            ("| " + _("KV tokens per replica") + f" | {best.kv_tokens_per_replica} |"),
            ("| " + _("Max concurrency (all replicas)") + f" | {best.max_concurrency_total} |"),
        ]
        out += _speed_rows(shown_speed(best, result))
    out += _serving_markdown(result)
    out += [
        "",
        ("## " + _("Candidates")),
        "",
        (
            "| "
            + _("layout")
            + " | dtype | "
            + _("fits")
            + " | "
            + _("score")
            + " | "
            + _("Output tok/s")
            + " | "
            + _("TTFT p50 ms")
            + " | "
            + _("why not")
            + " |"
        ),
        "|---|---|---|---|---|---|---|",
    ]
    for c in result.candidates:
        why_not = _md_escape(messages.text(c.rejected_reason))
        speed = shown_speed(c, result)
        tok, ttft = _speed_cells(speed)
        out.append(
            f"| {c.label} | {c.weight_dtype} | {'✓' if c.fits else '✗'} | {c.score} | "
            f"{tok} | {ttft} | {why_not} |"
        )
    out += ["", ("## " + _("Pitfalls")), ""]
    out += [
        f"- [ ] **{m.severity_label}** {m.text} → {m.action}"
        for m in messages.shown_all(result.pitfalls)
    ]
    out += ["", ("## " + _("Signals for and against Ray")), ""]
    out += [
        (
            f"- {('✓' if m.hit else '·')} "
            + (_("for Ray") if m.direction == "for_ray" else _("against Ray"))
            + f" ({m.strength_label}): {m.text}"
        )
        for m in messages.shown_all(result.signals)
    ]
    out += ["", ("## " + _("Configs")), ""]
    for name, text in config_files(result).items():
        if name == "README.md":
            continue
        lang = {"nginx.conf": "nginx", "serve.yaml": "yaml"}.get(
            name, "python" if name.endswith(".py") else "json" if name.endswith(".json") else "bash"
        )
        out += [f"### {name}", "", f"```{lang}", text.rstrip(), "```", ""]
    out += [("## " + _("Spec")), "", "```json", json.dumps(plan.spec, indent=2), "```", ""]
    return "\n".join(out)
