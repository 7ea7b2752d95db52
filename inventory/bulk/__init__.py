"""Bulk import and export of machines with their NICs, as CSV or YAML.

An upload is parsed into plain row dicts (`files`), stored server-side (MachineImportBatch),
validated row by row for the preview, and applied all-or-nothing on confirmation (`rows`);
`export` writes the same columns back.
"""

from inventory.bulk.export import export_csv, export_yaml, format_nics_cell
from inventory.bulk.files import (
    CSV_COLUMNS,
    MAX_CELL_BYTES,
    MAX_FILE_BYTES,
    MAX_ROWS,
    NIC_KEYS,
    ImportFileError,
    parse_csv,
    parse_file,
    parse_nics_cell,
    parse_yaml,
    store_upload,
)
from inventory.bulk.rows import ImportPreview, RowResult, apply_rows, validate_rows

__all__ = [
    "CSV_COLUMNS",
    "MAX_CELL_BYTES",
    "MAX_FILE_BYTES",
    "MAX_ROWS",
    "NIC_KEYS",
    "ImportFileError",
    "ImportPreview",
    "RowResult",
    "apply_rows",
    "export_csv",
    "export_yaml",
    "format_nics_cell",
    "parse_csv",
    "parse_file",
    "parse_nics_cell",
    "parse_yaml",
    "store_upload",
    "validate_rows",
]
