"""Markdown in, sanitised HTML out; and the ADR-layout Markdown export of a record."""

import re
from datetime import UTC

import markdown as md
import nh3
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import slugify
from django.utils.translation import gettext as _

from planner.decisions.models import DecisionRecord, Status, format_number
from planner.decisions.prefill import plan_estimates
from planner.decisions.rules import readiness

MARKDOWN_EXTENSIONS = ["tables", "fenced_code", "sane_lists"]
ALLOWED_URL_SCHEMES = {"http", "https", "mailto"}


def render_markdown(text: str) -> SafeString:
    """Return `text` rendered as HTML with everything executable removed.

    Markdown passes raw HTML through, so the output is cleaned by nh3 (an allow-list of tags and
    attributes, no event handlers, no javascript: URLs) before it is marked safe.
    """
    html = md.markdown(text or "", extensions=MARKDOWN_EXTENSIONS, output_format="html")
    return mark_safe(  # noqa: S308 - nh3 has just removed everything not on its allow-list
        nh3.clean(html, url_schemes=ALLOWED_URL_SCHEMES, link_rel="noopener noreferrer nofollow")
    )


# A '<' that could open raw HTML (a tag, a closing tag, a comment, a declaration). Markdown
# renderers pass raw HTML through, and an exported record is read in wikis and editors that
# do not sanitise it: user text must show as text. A lone '<' ("p95 < 200 ms") stays.
_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
# The exporter's own line breaks inside table cells; NUL never reaches a record (PostgreSQL
# text cannot hold it), so user text cannot fake one.
_CELL_BREAK = "\x00br\x00"


def _without_raw_html(document: str) -> str:
    """Return `document` with every raw-HTML opener escaped, then the cell breaks restored."""
    return _HTML_OPENER.sub("&lt;", document).replace(_CELL_BREAK, "<br>")


def _cell(value: object) -> str:
    """Return a value fit for one Markdown table cell."""
    text = "" if value is None else str(value).replace("|", "\\|")
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return _CELL_BREAK.join(line for line in lines if line) or "—"


def _number(value: float | None) -> str:
    return "—" if value is None else f"{value:g}"


def export_markdown(decision: DecisionRecord) -> str:
    """Return the record as one ADR Markdown document (stable: same record, same bytes)."""
    lines = [f"# {format_number(decision.number)}: {decision.title}", ""]
    status = decision.get_status_display()
    if decision.accepted_with_open_evidence:
        status += " — " + _("accepted with open evidence")
    lines.append("- " + _("Status") + f": {status}")
    lines.append("- " + _("Date") + f": {decision.created_at.date().isoformat()}")
    if decision.decided_at:
        lines.append("- " + _("Decided") + f": {decision.decided_at.date().isoformat()}")
    authors = ", ".join(sorted(u.get_username() for u in decision.authors.all()))
    lines.append("- " + _("Authors") + f": {authors or '—'}")
    lines.append("- " + _("Pool") + f": {decision.get_pool_kind_display()}")
    source = decision.plan if decision.plan_id else None
    if decision.pool_plan_id:
        source = decision.pool_plan
    if source is not None:
        lines.append(
            "- "
            + (_("Pool plan") if decision.pool_plan_id else _("Plan"))
            + f": {source.title} ({source.public_id}, "
            + _("engine")
            + f" {source.engine_version})"
        )
    supersedes = sorted(format_number(d.number) for d in decision.supersedes.all())
    if supersedes:
        lines.append("- " + _("Supersedes") + f": {', '.join(supersedes)}")
    if decision.superseded_by_id:
        lines.append(
            "- " + _("Superseded by") + f": {format_number(decision.superseded_by.number)}"
        )
    lines += ["", ("## " + _("Context")), "", decision.context.strip() or "—", ""]

    lines += [("## " + _("Decision")), ""]
    chosen = [
        (_("Model") + f": {decision.model_name or '—'}"),
        (_("Route") + f": {decision.get_route_display() or '—'}"),
        (_("Executor backend") + f": {decision.executor_backend or '—'}"),
        (_("Layout") + f": {decision.layout or '—'}"),
    ]
    lines += [f"- {item}" for item in chosen]
    lines.append("")
    if decision.decision_text.strip():
        lines += [decision.decision_text.strip(), ""]
    sentence = " ".join(decision.verifiable_sentence.split()) or "—"
    lines += [f"> {sentence}", ""]

    lines += [
        ("## " + _("Ownership")),
        "",
        ("| " + _("Responsibility") + " | " + _("Owner") + " | " + _("Mechanism") + " |"),
        "|---|---|---|",
    ]
    for row in decision.ordered_responsibilities():
        lines.append(
            f"| {_cell(row.get_kind_display())} | {_cell(row.owner)} | {_cell(row.mechanism)} |"
        )
    lines.append("")

    estimates = plan_estimates(decision.plan if decision.plan_id else None)
    lines += [
        ("## " + _("Evidence")),
        "",
        (
            "| "
            + _("Measurement")
            + " | "
            + _("Threshold")
            + " | "
            + _("Measured")
            + " | "
            + _("Plan estimate")
            + " | "
            + _("Source")
            + " | "
            + _("Result")
            + " |"
        ),
        "|---|---|---|---|---|---|",
    ]
    for item in decision.ordered_evidence():
        threshold = item.threshold_text or "—"
        measured = item.measured_text or "—"
        estimate = estimates.get(item.kind)
        source = item.get_value_source_display() or "—"
        if item.window_start and item.window_end:
            source += (
                f" {item.window_start.astimezone(UTC):%Y-%m-%d %H:%M}–"
                f"{item.window_end.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
            )
        if item.note:
            source += f" ({item.note})"
        result = {True: _("pass"), False: _("FAIL"), None: _("open")}[item.passed]
        lines.append(
            f"| {_cell(item.get_kind_display())} | {_cell(threshold)} | {_cell(measured)} "
            f"| {_cell(_number(estimate) + ' ms' if estimate is not None else None)} "
            f"| {_cell(source)} | {result} |"
        )
    lines.append("")
    state = readiness(decision)
    if decision.status == Status.ACCEPTED and state.open_evidence:
        lines += [_("Open evidence:"), "", *[f"- {p}" for p in state.open_evidence], ""]

    lines += [("## " + _("Alternatives considered")), "", decision.alternatives.strip() or "—", ""]
    lines += [("## " + _("Consequences")), "", decision.consequences.strip() or "—", ""]
    return _without_raw_html("\n".join(lines))


def export_filename(decision: DecisionRecord) -> str:
    """Return the ADR file name, e.g. '0007-keep-mp-on-the-dedicated-nodes.md'."""
    slug = slugify(decision.title, allow_unicode=True)[:60].strip("-") or "decision"
    return f"{decision.number:04d}-{slug}.md"
