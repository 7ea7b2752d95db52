"""Whether a label matcher's regular expression is one Prometheus accepts.

Prometheus compiles `=~` and `!~` values with Go's regexp package (RE2 syntax), anchored at both
ends (the anchoring changes what matches, never whether it compiles). Python's `re` reads
almost the same language; this module closes the gap both ways before compiling with it:
- RE2 refuses what Python accepts: backreferences, lookaround, atomic groups, conditionals,
  possessive quantifiers, `(?P=name)`, `\\Z`, flags other than i, m, s and U, and repeat counts
  over 1000;
- Python refuses what RE2 accepts: Unicode classes (`\\pL`, `\\p{Greek}`), ASCII classes
  (`[[:alpha:]]`), quoted literals (`\\Q...\\E`), `\\z`, `(?<name>...)`, the U flag and flags
  set mid-pattern; they are replaced by an equivalent Python compiles (the regex is only
  checked, never run).
"""

from __future__ import annotations

import re
import warnings

# RE2's limit on {n}, {n,} and {n,m} counts (Go's regexp/syntax: maxRepeat).
MAX_REPEAT = 1000

# Checked outside bracket expressions and escapes (`[?=]` and `\(?=` are literals).
_REFUSED = (
    (re.compile(r"\\[1-9]"), "backreferences"),
    (re.compile(r"\(\?(?:=|!|<=|<!)"), "lookahead or lookbehind"),
    (re.compile(r"\(\?>"), "atomic groups"),
    (re.compile(r"\(\?\("), "conditionals"),
    (re.compile(r"\(\?P="), "named backreferences"),
    (re.compile(r"\\Z"), r"\Z (write \z or $)"),
    (re.compile(r"[*+?}]\+"), "possessive quantifiers"),
)
_FLAGS = re.compile(r"\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])")
_QUOTED = re.compile(r"\\Q(.*?)(?:\\E|\Z)", re.DOTALL)
# One character's spellings: a Unicode class, a braced hex code point, any byte.
_UNICODE_CLASS = re.compile(r"\\[pP](?:\{\^?[A-Za-z_]+\}|[A-Za-z])|\\x\{[0-9A-Fa-f]+\}|\\C")
_ASCII_CLASS = re.compile(r"\[:\^?[a-z]+:\]")
_REPEAT = re.compile(r"\{(\d+)(?:,(\d*))?\}")


def _escaped(text: str, at: int) -> bool:
    """Whether the character at `at` follows an odd number of backslashes."""
    return (at - len(text[:at].rstrip("\\"))) % 2 == 1


def _without_brackets(text: str) -> str:
    """Return `text` with each bracket expression (`[...]`, `[^]a]`, `[[:alpha:]]`) as `x`."""
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            out.append(text[i : i + 2])
            i += 2
            continue
        if text[i] != "[":
            out.append(text[i])
            i += 1
            continue
        j = i + 1
        j += text[j : j + 1] == "^"
        j += text[j : j + 1] == "]"  # a leading ] is a literal
        while j < len(text) and text[j] != "]":
            if text.startswith("[:", j) and (end := text.find(":]", j + 2)) > 0:
                j = end + 2
            else:
                j += 2 if text[j] == "\\" else 1
        out.append("x")
        i = j + 1
    return "".join(out)


def _flags_error(text: str) -> str | None:
    for found in _FLAGS.finditer(text):
        if _escaped(text, found.start()):
            continue
        on, off, end = found.group(1), found.group(2), found.group(3)
        letters = on + (off or "")
        if set(letters) - set("imsU") or (end == ")" and not letters) or off == "":
            return "Prometheus' regular expressions take only the flags i, m, s and U"
    return None


def _for_python(value: str) -> str:
    """Return `value` with RE2 spellings Python lacks replaced by ones it compiles."""
    value = _UNICODE_CLASS.sub("a", value)
    value = _ASCII_CLASS.sub("a-z", value).replace(r"\z", r"\Z")
    value = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", value)
    # Flags never decide whether a pattern compiles, and Python wants global ones first and
    # has no U: `(?i:` becomes `(?:`, a lone `(?i)` goes.
    return _FLAGS.sub(lambda m: "(?:" if m.group(3) == ":" else "", value)


def regex_error(value: str) -> str | None:
    """Return why `value` is not a regex Prometheus compiles, or None when it is."""
    value = _QUOTED.sub(lambda m: re.escape(m.group(1)), value)
    bare = _without_brackets(value)
    for pattern, what in _REFUSED:
        found = pattern.search(bare)
        while found and _escaped(bare, found.start()):
            found = pattern.search(bare, found.start() + 1)
        if found:
            return f"Prometheus' regular expressions have no {what}"
    flags = _flags_error(bare)
    if flags:
        return flags
    for found in _REPEAT.finditer(bare):
        if max(int(n) for n in found.groups() if n) > MAX_REPEAT:
            return f"a repeat count is at most {MAX_REPEAT}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set" and the like
            re.compile(_for_python(value))
    except re.error as exc:
        return f"not a regular expression ({exc.msg})"
    except (OverflowError, RecursionError):
        return "not a regular expression (too large)"
    return None
