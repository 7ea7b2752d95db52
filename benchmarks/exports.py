"""JSON and CSV exports of a run (the bearer token is never part of a run)."""

from __future__ import annotations

import csv
import io
import json

from django.http import HttpResponse

from benchmarks.models import BenchmarkRun

CSV_COLUMNS = (
    "level", "concurrency", "index", "start_s", "success", "ttft_s", "latency_s",
    "prompt_tokens", "output_tokens", "asked_output_tokens", "finish_reason", "error",
)  # fmt: skip


def run_document(run: BenchmarkRun) -> dict:
    return {
        "run": str(run.public_id),
        "target": run.target_name,
        "plan": str(run.plan.public_id) if run.plan else None,
        "status": run.status,
        "model": run.model_name,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "config": run.config,
        "results": run.results,
        "comparison": run.comparison,
        "records": run.records,
    }


def json_response(run: BenchmarkRun) -> HttpResponse:
    response = HttpResponse(
        json.dumps(run_document(run), indent=1), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="benchmark-{run.public_id}.json"'
    return response


def csv_text(run: BenchmarkRun) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    levels = run.levels
    for number, records in enumerate(run.records, start=1):
        concurrency = levels[number - 1]["concurrency"] if number <= len(levels) else None
        for r in records:
            writer.writerow([number, concurrency, *(r.get(c, "") for c in CSV_COLUMNS[2:])])
    return out.getvalue()


def csv_response(run: BenchmarkRun) -> HttpResponse:
    response = HttpResponse(csv_text(run), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="benchmark-{run.public_id}.csv"'
    return response
