"""Bulk import and export of machines with their NICs, as CSV or YAML.

An upload is parsed into plain row dicts, stored server-side (MachineImportBatch), validated
row by row for the preview, and applied all-or-nothing on confirmation.
"""

import csv
import io
import math
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _

from core.spreadsheet import escape_cell, unescape_cell
from inventory import services, untrusted_yaml
from inventory.forms import MACHINE_FIELDS, MachineForm
from inventory.models import (
    GpuType,
    ImportFormat,
    Machine,
    MachineImportBatch,
    NetworkInterface,
    Pool,
    PoolKind,
)

CSV_COLUMNS = [*MACHINE_FIELDS, "nics"]
NIC_KEYS = ("name", "speed_gbps", "kind", "role")


# Input limits: a whole upload, one cell (a CSV field or a YAML value) and the machines per file.
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_CELL_BYTES = 128 * 1024
MAX_ROWS = 20_000


class ImportFileError(ValueError):
    """The file cannot be read as a machine list at all (nothing row-specific)."""


# Parsing -----------------------------------------------------------------------------------


def parse_nics_cell(cell: str) -> list[dict[str, str]]:
    """Parse "eth1 25 ethernet data; eno1 1 ethernet management" into NIC dicts.

    Kind and role may be left out (ethernet, data). Malformed entries are kept as they are
    so that row validation can name them.
    """
    nics = []
    for chunk in (cell or "").split(";"):
        parts = chunk.split()
        if not parts:
            continue
        nic = dict(zip(NIC_KEYS, parts, strict=False))
        if len(parts) > len(NIC_KEYS):
            nic["_extra"] = " ".join(parts[len(NIC_KEYS) :])
        nics.append(nic)
    return nics


def format_nics_cell(nics: list[dict[str, Any]]) -> str:
    """Return the CSV cell for a machine's NICs (the inverse of parse_nics_cell)."""
    return "; ".join(
        f"{nic['name']} {nic['speed_gbps']:g} {nic['kind']} {nic['role']}" for nic in nics
    )


def _cell_problem(value: Any) -> str | None:
    """Return why an imported value cannot be stored, or None when it is a plain value."""
    if value is None or isinstance(value, bool | int | str):
        if isinstance(value, str) and "\x00" in value:  # PostgreSQL cannot store it
            return _("NUL characters are not accepted")
        if isinstance(value, str) and len(value.encode()) > MAX_CELL_BYTES:
            return _("the value is %(kib)s KiB; a cell holds at most 128 KiB") % {
                "kib": len(value.encode()) // 1024
            }
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else _("NaN and infinity are not accepted")
    if isinstance(value, list | dict):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            problem = _cell_problem(key) or _cell_problem(item)
            if problem:
                return problem
        return None
    if isinstance(value, date):
        return _("dates are not accepted; quote the value to keep it as text")
    if isinstance(value, bytes):
        return _("binary data (!!binary) is not accepted")
    return _("a %(type)s is not accepted; use text, numbers or lists") % {
        "type": type(value).__name__
    }


def _refuse_bad_cell(value: Any, *, number: int, field: str) -> None:
    problem = _cell_problem(value)
    if problem:
        raise ImportFileError(
            _("Machine %(number)s, field %(field)s: %(problem)s.")
            % {"number": number, "field": field[:60], "problem": problem}
        )


def _refuse_too_many(rows: list[dict[str, Any]]) -> None:
    if len(rows) > MAX_ROWS:
        raise ImportFileError(
            _("The file holds more than %(max)s machines; split it into several imports.")
            % {"max": MAX_ROWS}
        )


def _text(data: bytes | str) -> str:
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFileError(_("The file is not UTF-8 text.")) from None


def _csv_reader(text: str) -> csv.DictReader:
    # The csv module's field limit is process-wide and its default (128 KiB) raises an error
    # that names no column. Uploads are capped at MAX_FILE_BYTES, so lift the limit to that
    # and check each cell ourselves (_cell_problem), naming the column.
    if csv.field_size_limit() < MAX_FILE_BYTES:
        csv.field_size_limit(MAX_FILE_BYTES)
    return csv.DictReader(io.StringIO(text))


def parse_csv(data: bytes | str) -> list[dict[str, Any]]:
    """Return one dict per CSV row (column names as in an export)."""
    reader = _csv_reader(_text(data))
    try:
        fieldnames = reader.fieldnames
    except csv.Error as exc:
        raise ImportFileError(
            _("The CSV file cannot be read: %(error)s") % {"error": exc}
        ) from None
    if not fieldnames:
        raise ImportFileError(_("The CSV file is empty: it needs a header row."))
    headers = [name.strip() for name in fieldnames]
    unknown = sorted(set(headers) - set(CSV_COLUMNS))
    if unknown:
        raise ImportFileError(
            _("Unknown CSV columns: %(unknown)s. Allowed columns: %(allowed)s.")
            % {"unknown": ", ".join(unknown), "allowed": ", ".join(CSV_COLUMNS)}
        )
    twice = sorted({name for name in headers if headers.count(name) > 1})
    if twice:
        raise ImportFileError(
            _("Columns appear more than once: %(names)s. Keep one of each.")
            % {"names": ", ".join(twice)}
        )
    if "hostname" not in headers:
        raise ImportFileError(_("The CSV file needs a hostname column."))
    rows = []
    try:
        for raw in reader:
            row = {
                k.strip(): unescape_cell((v or "").strip()) for k, v in raw.items() if k is not None
            }
            for column, value in row.items():
                _refuse_bad_cell(value, number=len(rows) + 1, field=column)
            if not any(row.values()):
                continue  # blank line
            row["nics"] = parse_nics_cell(row.get("nics", ""))
            rows.append(row)
            _refuse_too_many(rows)
    except csv.Error as exc:
        raise ImportFileError(
            _("The CSV file cannot be read at line %(line)s: %(error)s")
            % {"line": reader.line_num, "error": exc}
        ) from None
    return rows


def parse_yaml(data: bytes | str) -> list[dict[str, Any]]:
    """Return one dict per machine of a YAML document (a list, or {machines: [...]})."""
    try:
        doc = untrusted_yaml.load(_text(data))
    except yaml.YAMLError as exc:
        raise ImportFileError(_("The file is not valid YAML: %(error)s") % {"error": exc}) from None
    if isinstance(doc, dict) and "machines" in doc:
        doc = doc["machines"]
    if not isinstance(doc, list):
        raise ImportFileError(_("The YAML file must hold a list of machines (or machines: [...])."))
    rows = []
    for item in doc:
        if not isinstance(item, dict):
            rows.append({"_error": _("Each machine must be a mapping of field: value.")})
            continue
        row: dict[str, Any] = {}
        for key, value in item.items():
            _refuse_bad_cell(value, number=len(rows) + 1, field=str(key))
            if key == "tags" and isinstance(value, list):
                value = ",".join(str(v) for v in value)
            row[str(key)] = value if key == "nics" else ("" if value is None else value)
        rows.append(row)
        _refuse_too_many(rows)
    return rows


def parse_file(data: bytes | str, file_format: str) -> list[dict[str, Any]]:
    """Parse an uploaded machine list; ImportFileError when the file as a whole is unusable."""
    if len(data) > MAX_FILE_BYTES:
        raise ImportFileError(_("The file must be at most 5 MiB."))
    rows = parse_csv(data) if file_format == ImportFormat.CSV else parse_yaml(data)
    if not rows:
        raise ImportFileError(_("The file holds no machines."))
    return rows


def store_upload(
    *,
    rows: list[dict[str, Any]],
    file_format: str,
    filename: str,
    update_existing: bool,
    actor: Any,
) -> MachineImportBatch:
    """Keep parsed rows server-side until confirmed; forget unconfirmed uploads after a day."""
    stale = timezone.now() - timedelta(days=1)
    MachineImportBatch.objects.filter(applied_at__isnull=True, created_at__lt=stale).delete()
    return MachineImportBatch.objects.create(
        created_by=actor if getattr(actor, "is_authenticated", False) else None,
        filename=filename[:255],
        file_format=file_format,
        update_existing=update_existing,
        rows=rows,
    )


# Validation --------------------------------------------------------------------------------


class _RowForm(MachineForm):
    """MachineForm for one imported row: GPU type by slug, pool by name, no per-row queries."""

    def __init__(self, *args: Any, gpu_types: dict[str, GpuType], pools: dict[str, Pool], **kw):
        super().__init__(*args, **kw)
        self.gpu_types, self.pools = gpu_types, pools
        from django import forms

        self.fields["gpu_type"] = forms.CharField(label=_("GPU type"))
        self.fields["pool"] = forms.CharField(label=_("Pool"), required=False)

    def clean_gpu_type(self) -> GpuType:
        slug = self.cleaned_data["gpu_type"].strip()
        if slug not in self.gpu_types:
            raise ValidationError(
                _("Unknown GPU type %(slug)s; use a slug from the GPU types list, e.g. %(known)s.")
                % {"slug": repr(slug), "known": ", ".join(sorted(self.gpu_types)[:6])}
            )
        return self.gpu_types[slug]

    def clean_pool(self) -> Pool | None:
        name = (self.cleaned_data.get("pool") or "").strip()
        if not name:
            return None
        return self.pools.get(name) or Pool(name=name, kind=PoolKind.DEDICATED)

    def _get_validation_exclusions(self) -> set[str]:
        # The GPU type and pool come from the preloaded dicts: no existence query per row.
        return {*super()._get_validation_exclusions(), "gpu_type", "pool"}

    # Uniqueness is checked against a preloaded set of host names, once for the whole file.
    def validate_unique(self) -> None:
        return None

    def validate_constraints(self) -> None:
        return None


@dataclass(slots=True, kw_only=True)
class RowResult:
    number: int
    data: dict[str, Any]
    action: str = "create"
    errors: dict[str, list[str]] = field(default_factory=dict)
    cleaned: dict[str, Any] = field(default_factory=dict)
    nics: list[dict[str, Any]] = field(default_factory=list)
    new_pool: str = ""

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def error_fields(self) -> list[str]:
        return list(self.errors)


@dataclass(slots=True, kw_only=True)
class ImportPreview:
    rows: list[RowResult]

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    @property
    def error_count(self) -> int:
        return sum(len(messages) for row in self.rows for messages in row.errors.values())

    @property
    def bad_rows(self) -> int:
        return sum(1 for row in self.rows if not row.ok)

    @property
    def new_pools(self) -> list[str]:
        return sorted({row.new_pool for row in self.rows if row.new_pool})


def _validate_nics(raw: Any, result: RowResult) -> None:
    if raw in (None, ""):
        raw = []
    if not isinstance(raw, list):
        result.errors.setdefault("nics", []).append(
            _("nics must be a list of interfaces (name, speed_gbps, kind, role).")
        )
        return
    seen: set[str] = set()
    for index, nic in enumerate(raw, start=1):
        if not isinstance(nic, dict):
            result.errors.setdefault("nics", []).append(
                _("Interface %(n)s must be a mapping of name, speed_gbps, kind, role.")
                % {"n": index}
            )
            continue
        if nic.get("_extra"):
            result.errors.setdefault("nics", []).append(
                _("Interface %(n)s: unexpected %(extra)s (format: name speed_gbps kind role).")
                % {"n": index, "extra": repr(nic["_extra"])}
            )
            continue
        data = {"kind": "ethernet", "role": "data", **{k: nic.get(k) for k in NIC_KEYS if k in nic}}
        # Model field validation only (a form per NIC costs more than the whole row).
        instance = NetworkInterface(**{k: "" if v is None else v for k, v in data.items()})
        try:
            instance.clean_fields(exclude=["machine"])
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                for message in messages:
                    result.errors.setdefault("nics", []).append(
                        _("Interface %(n)s (%(name)s) %(field)s: %(message)s")
                        % {
                            "n": index,
                            "name": nic.get("name") or "?",
                            "field": name,
                            "message": message,
                        }
                    )
            continue
        cleaned = {k: getattr(instance, k) for k in NIC_KEYS}
        name = cleaned["name"]
        if name in seen:
            result.errors.setdefault("nics", []).append(
                _("Interface %(n)s: the name %(name)s is used twice on this machine.")
                % {"n": index, "name": name}
            )
        seen.add(name)
        result.nics.append(cleaned)


def validate_rows(rows: list[dict[str, Any]], *, update_existing: bool) -> ImportPreview:
    """Validate every row; return per-row, per-field errors (nothing is written)."""
    gpu_types = {g.slug: g for g in GpuType.objects.all()}
    pools = {p.name: p for p in Pool.objects.all()}
    existing = {m.hostname: m for m in Machine.objects.select_related("gpu_type", "pool")}
    seen_hosts: dict[str, int] = {}
    results = []
    for number, row in enumerate(rows, start=1):
        result = RowResult(number=number, data=row)
        results.append(result)
        if row.get("_error"):
            result.errors["__all__"] = [str(row["_error"])]
            continue
        unknown = sorted(set(row) - set(CSV_COLUMNS))
        if unknown:
            result.errors["__all__"] = [
                _("Unknown fields: %(unknown)s.") % {"unknown": ", ".join(unknown)}
            ]
        data = {k: row.get(k, "") for k in MACHINE_FIELDS}
        if not data.get("status"):
            data["status"] = "active"
        hostname = str(data.get("hostname") or "").strip().lower()
        instance = existing.get(hostname) if update_existing else None
        form = _RowForm(data=data, instance=instance, gpu_types=gpu_types, pools=pools)
        if not form.is_valid():
            for name, messages in form.errors.items():
                result.errors.setdefault(name, []).extend(messages)
        else:
            result.cleaned = form.cleaned_data
            pool = form.cleaned_data.get("pool")
            if pool is not None and pool.pk is None:
                result.new_pool = pool.name
        if hostname:
            if hostname in seen_hosts:
                result.errors.setdefault("hostname", []).append(
                    _("Duplicate hostname %(host)s: also on row %(row)s of this file.")
                    % {"host": hostname, "row": seen_hosts[hostname]}
                )
            else:
                seen_hosts[hostname] = number
            if hostname in existing:
                if update_existing:
                    result.action = "update"
                else:
                    result.errors.setdefault("hostname", []).append(
                        _(
                            "A machine with hostname %(host)s already exists (tick "
                            "'update existing machines' to change it)."
                        )
                        % {"host": hostname}
                    )
        _validate_nics(row.get("nics"), result)
    return ImportPreview(rows=results)


# Applying ----------------------------------------------------------------------------------


@transaction.atomic
def apply_rows(
    rows: list[dict[str, Any]], *, update_existing: bool, actor: Any | None = None
) -> ImportPreview:
    """Validate again and write every row, or nothing: raise ValidationError on any bad row."""
    preview = validate_rows(rows, update_existing=update_existing)
    if not preview.ok:
        raise ValidationError(
            _("%(rows)s of %(total)s rows have errors; nothing was imported.")
            % {"rows": preview.bad_rows, "total": len(preview.rows)}
        )
    pools: dict[str, Pool] = {}
    existing = {m.hostname: m for m in Machine.objects.select_for_update()}
    to_create = []
    for row in preview.rows:
        fields = dict(row.cleaned)
        pool = fields.get("pool")
        if pool is not None and pool.pk is None:
            if pool.name not in pools:
                pools[pool.name] = services.pool_create(
                    actor=actor, name=pool.name, kind=PoolKind.DEDICATED
                )
            fields["pool"] = pools[pool.name]
        machine = existing.get(fields["hostname"])
        if machine is not None:
            services.machine_update(machine=machine, actor=actor, nics=row.nics, **fields)
        else:
            to_create.append((fields, row.nics))
    try:
        with transaction.atomic():
            services.machines_bulk_create(machines=to_create, actor=actor)
    except IntegrityError as exc:
        # Someone wrote a clashing machine between the check above and the insert.
        raise ValidationError(
            _("The inventory changed during the import (%(error)s); nothing was imported.")
            % {"error": exc}
        ) from exc
    return preview


# Export ------------------------------------------------------------------------------------


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
