"""Reading an uploaded machine list: CSV or YAML into plain row dicts, with caps on size, rows and
cells, stored server-side for the preview.
"""

import csv
import io
import math
from datetime import date, timedelta
from typing import Any

import yaml
from django.utils import timezone
from django.utils.translation import gettext as _

from core.spreadsheet import unescape_cell
from inventory import untrusted_yaml
from inventory.models import (
    MACHINE_FIELDS,
    ImportFormat,
    MachineImportBatch,
)

CSV_COLUMNS = [*MACHINE_FIELDS, "nics"]
NIC_KEYS = ("name", "speed_gbps", "kind", "role")


# Input limits: a whole upload, one cell (a CSV field or a YAML value) and the machines per file.
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_CELL_BYTES = 128 * 1024
MAX_ROWS = 20_000


class ImportFileError(ValueError):
    """The file cannot be read as a machine list at all (nothing row-specific)."""


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
