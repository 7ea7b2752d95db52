"""The Content-Disposition header of every download (RFC 6266)."""

import unicodedata
from urllib.parse import quote


def attachment(filename: str) -> str:
    """Return `attachment; filename=...` that every browser decodes, whatever the name's script.

    A non-ASCII name (a decision titled in Chinese) goes in `filename*` as UTF-8, percent-encoded
    (RFC 6266 and RFC 8187); `filename` carries an ASCII fallback for the clients that ignore it.
    Django would send the raw name MIME-encoded (=?utf-8?b?...?=), which browsers do not decode.
    """
    fallback = _ascii_fallback(filename)
    header = f'attachment; filename="{fallback}"'
    if fallback != filename:
        header += f"; filename*=UTF-8''{quote(filename, safe='')}"
    return header


def _ascii_fallback(filename: str) -> str:
    """Return `filename` in ASCII: accents dropped, other characters as '_', no quote or slash."""
    decomposed = unicodedata.normalize("NFKD", filename)
    chars = []
    for char in decomposed:
        if unicodedata.combining(char):
            continue
        printable = " " <= char <= "~" and char not in '"\\/'
        chars.append(char if printable else "_")
    return "".join(chars) or "download"
