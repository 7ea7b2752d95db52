"""Read untrusted JSON: bounded nesting and numbers, no NaN/Infinity, the paths of NUL.

Python's json module recurses once per level, so a body nested 100,000 deep raises
RecursionError (a 500) and anything a little shallower still reaches code that recurses again.
Every JSON entry point (the API parser, pasted config.json files) reads through `loads`, which
refuses such input as a ValueError naming where it happens.
"""

import json
import math
import re
from collections.abc import Mapping
from typing import Any

MAX_INT = 2**63 - 1
NUMBER_MESSAGE = "number out of range: integers up to 2**63 - 1 and finite decimals only"
# Plan specs nest 4 levels and real config.json files 5; 32 leaves room without inviting abuse.
MAX_DEPTH = 32

# A JSON object key, any other string, or a bracket (strings first: they may hold brackets).
_TOKEN = re.compile(
    r'(?P<key>"(?:[^"\\]|\\.)*")\s*:|"(?:[^"\\]|\\.)*"|(?P<open>[\[{])|(?P<close>[\]}])'
)


class JsonInputError(ValueError):
    """The JSON is well-formed but refused; `path` names where (dotted, "" for the top)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path


def _refuse_constant(name: str) -> Any:
    raise JsonInputError(f"{name} is not a number JSON allows", path="")


def _join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _bad_number(item: Any) -> bool:
    if isinstance(item, float):
        return not math.isfinite(item)
    return isinstance(item, int) and not isinstance(item, bool) and abs(item) > MAX_INT


def _has_refused_value(value: Any, max_depth: int) -> bool:
    """Fast pass of refused_value: whether anything is refused (no paths built).

    Level by level with exact type checks: json.loads makes only dict, list, str, int, float,
    bool and None, and this pass runs on every API body.
    """
    level, depth = [value], 1
    while level:
        if depth > max_depth:
            return True
        deeper = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                kind = type(child)
                if kind is dict or kind is list:
                    deeper.append(child)
                elif kind is float:
                    if child - child != 0.0:  # inf - inf and nan - nan are nan
                        return True
                elif kind is int and not -MAX_INT <= child <= MAX_INT:
                    return True
        level, depth = deeper, depth + 1
    return False


def refused_value(value: Any, max_depth: int = MAX_DEPTH) -> tuple[str, str] | None:
    """Return (path, why) of the first value no JSON API accepts, or None.

    Refused: containers nested deeper than `max_depth`, numbers that overflowed to infinity
    (JSON's 1e999) and integers beyond 64 bits (no column stores them; float() overflows).
    Iterative, so that it never recurses itself; paths are built only once something is found
    (building one per value made a 1.5 MB body cost half a second).
    """
    if not isinstance(value, dict | list):
        return ("", NUMBER_MESSAGE) if _bad_number(value) else None
    if not _has_refused_value(value, max_depth):
        return None
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        item, path, depth = stack.pop()
        if _bad_number(item):
            return path, NUMBER_MESSAGE
        if isinstance(item, Mapping):
            children: Any = item.items()
        elif isinstance(item, list):
            children = enumerate(item)
        else:
            continue
        if depth > max_depth:
            return path, depth_message(max_depth)
        stack.extend((child, _join(path, key), depth + 1) for key, child in children)
    return None


def _too_deep_path_in_text(text: str, max_depth: int) -> str:
    """Return the top-level key under which `text` nests too deep ("" if not in an object)."""
    depth, key, top_key = 0, "", ""
    for match in _TOKEN.finditer(text):
        if match["key"] is not None:
            if depth == 1:
                top_key = match["key"]
            continue
        if match["open"]:
            depth += 1
            if depth > max_depth:
                break
        elif match["close"]:
            depth -= 1
    if top_key:
        try:
            key = json.loads(top_key)
        except ValueError:
            key = ""
    return key


# The escapes that decode to NUL or to a UTF-16 surrogate: a body without one holds neither.
_SUSPECT_ESCAPE = re.compile(r"\\u(?:0000|[dD][89a-fA-F])")
# In a decoded string, any surrogate code point is unpaired: json.loads joins valid pairs.
_REFUSED_CHARACTER = re.compile("[\x00\ud800-\udfff]")
TEXT_MESSAGE = (
    "must not contain NUL (\\u0000) or an unpaired UTF-16 surrogate (\\ud800-\\udfff): "
    "no column stores them"
)


def refused_text_path(value: Any) -> str | None:
    """Return the path of the first string (key or value) holding NUL or a lone surrogate.

    PostgreSQL text and jsonb cannot hold NUL, and a lone surrogate cannot be encoded as
    UTF-8 at all (SQLite, PostgreSQL, the JSON renderer and the templates all fail on it), so
    every choice, related-field, tag or free-text value that carried one ended as a 500.
    Iterative: callers have bounded the depth, but a wide body stays cheap.
    """
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if type(item) is str:
            if _REFUSED_CHARACTER.search(item):
                return path
        elif type(item) is dict:
            for key, child in item.items():
                child_path = _join(path, key)
                if _REFUSED_CHARACTER.search(key):
                    return path or child_path
                stack.append((child, child_path))
        elif type(item) is list:
            stack.extend((child, _join(path, i)) for i, child in enumerate(item))
    return None


def depth_message(max_depth: int = MAX_DEPTH) -> str:
    return f"nested more than {max_depth} levels deep"


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """Parse `text` like json.loads; raise JsonInputError when nested too deep, on NaN, or on
    a string holding NUL or a lone surrogate (naming where).

    json.JSONDecodeError (malformed text) passes through unchanged for its line and column.
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise JsonInputError(
            depth_message(max_depth), path=_too_deep_path_in_text(text, max_depth)
        ) from None
    refused = refused_value(value, max_depth)
    if refused is not None:
        path, why = refused
        raise JsonInputError(why, path=path)
    if _SUSPECT_ESCAPE.search(text):
        where = refused_text_path(value)
        if where is not None:
            raise JsonInputError(TEXT_MESSAGE, path=where)
    return value


def nul_paths(value: Any, where: str = "") -> list[str]:
    """Return the dotted paths of the strings (keys or values) in `value` that contain NUL.

    PostgreSQL text and jsonb cannot hold NUL; finding them first turns a database error into
    a field error. Callers bound the depth first (`loads`), so recursion is safe here.
    """
    if isinstance(value, str):
        return [where] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            path = _join(where, key)
            if isinstance(key, str) and "\x00" in key:
                found.append(path)
            found.extend(nul_paths(item, path))
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found.extend(nul_paths(item, _join(where, i)))
    return found
