"""Keep CSV cells from running as spreadsheet formulas (CSV injection).

Excel, LibreOffice and Google Sheets evaluate a cell that starts with = + - @, a tab or a
carriage return. Such cells are written with a leading apostrophe, which spreadsheets show as
text; `unescape_cell` removes it again so that an exported file imports back unchanged.
(defusedcsv does the writing side, but our machine import must undo exactly what the export
did, so both rules live here, side by side.)
"""

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def _needs_quote(text: str) -> bool:
    # A value that already starts with the apostrophe and a formula character (or a second
    # apostrophe) is quoted too, so that unescaping never eats a character the user wrote.
    return text.startswith(FORMULA_STARTS) or (
        text.startswith(QUOTE) and text[1:2] in (*FORMULA_STARTS, QUOTE)
    )


def escape_cell(value: Any) -> Any:
    """Return `value` safe for a spreadsheet cell (strings only are changed)."""
    if isinstance(value, str) and _needs_quote(value):
        return QUOTE + value
    return value


def unescape_cell(text: str) -> str:
    """Undo escape_cell on a cell read back from a CSV file."""
    if text.startswith(QUOTE) and _needs_quote(text[1:]):
        return text[1:]
    return text


def escape_row(values: Any) -> list[Any]:
    """Return a CSV row with every cell escaped."""
    return [escape_cell(v) for v in values]
