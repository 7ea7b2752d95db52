"""Exporting machines with their NICs as CSV or YAML, in the columns an import reads back."""

import csv
import io
from typing import Any

import yaml
from django.db.models import QuerySet

from core.spreadsheet import escape_cell
from inventory.bulk.files import CSV_COLUMNS
from inventory.models import (
    MACHINE_FIELDS,
    Machine,
)


def format_nics_cell(nics: list[dict[str, Any]]) -> str:
    """Return the CSV cell for a machine's NICs (the inverse of parse_nics_cell)."""
    return "; ".join(
        f"{nic['name']} {nic['speed_gbps']:g} {nic['kind']} {nic['role']}" for nic in nics
    )


def _machine_record(machine: Machine) -> dict[str, Any]:
    record: dict[str, Any] = {}
    for name in MACHINE_FIELDS:
        if name == "pool":
            record[name] = machine.pool.name if machine.pool else ""
        elif name == "gpu_type":
            record[name] = machine.gpu_type.slug
        else:
            value = getattr(machine, name)
            record[name] = "" if value is None else value
    record["nics"] = [
        {"name": n.name, "speed_gbps": n.speed_gbps, "kind": n.kind, "role": n.role}
        for n in machine.nics.all()
    ]
    return record


def export_csv(machines: QuerySet[Machine]) -> str:
    """Return the machines (with NICs) as CSV that parse_csv reads back."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for machine in machines:
        record = _machine_record(machine)
        record["nics"] = format_nics_cell(record["nics"])
        writer.writerow({key: escape_cell(value) for key, value in record.items()})
    return out.getvalue()


def export_yaml(machines: QuerySet[Machine]) -> str:
    """Return the machines (with NICs) as YAML that parse_yaml reads back."""
    records = []
    for machine in machines:
        record = _machine_record(machine)
        record["tags"] = machine.tag_list
        records.append(record)
    return yaml.safe_dump(
        {"machines": records}, sort_keys=False, allow_unicode=True, default_flow_style=False
    )
