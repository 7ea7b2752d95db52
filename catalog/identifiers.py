"""Syntax of the identifiers that end up in generated shell scripts and config files.

Pure predicates shared by the inventory's field validators and the engine's spec parser: a value
that passes cannot break out of a shell word, an Nginx token or a YAML scalar, because none of
these grammars allows whitespace, quotes, `;`, `$`, backticks, braces or newlines.
"""

from __future__ import annotations

import ipaddress
import re

# RFC 1123: labels of 1-63 letters, digits and hyphens, not starting or ending with a hyphen;
# 253 characters at most in all.
_HOSTNAME_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
# Linux interface names: at most 15 bytes (IFNAMSIZ - 1), no slash or whitespace.
_INTERFACE_NAME = re.compile(r"[A-Za-z0-9_.:@-]{1,15}")
# Hugging Face repository ids: [owner/]name, each part starting with a letter or digit.
_REPO_PART = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_REPO_ID = re.compile(rf"{_REPO_PART}(/{_REPO_PART})?")
# Absolute POSIX paths of plain segments (no `..`, no spaces, no shell metacharacters).
_PATH = re.compile(r"(/[A-Za-z0-9_][A-Za-z0-9._+-]{0,127})+/?")
# Docker image references: [registry[:port]/]repo[/more][:tag][@sha256:digest].
_IMAGE = re.compile(
    r"(?:[A-Za-z0-9.-]+(?::[0-9]{1,5})?/)?"
    r"[a-z0-9]+(?:[._-][a-z0-9]+)*(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
    r"(?:@sha256:[a-f0-9]{64})?"
)
# Served model names and Serve application names.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def is_hostname(value: str) -> bool:
    """Return True for an RFC 1123 host name."""
    if not isinstance(value, str) or not value or len(value) > 253 or value.endswith("."):
        return False
    return all(_HOSTNAME_LABEL.fullmatch(label) for label in value.split("."))


def is_ip_address(value: str) -> bool:
    """Return True for an IPv4 or IPv6 address (no zone index, no brackets)."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return "%" not in value


def is_address(value: str) -> bool:
    """Return True for an IP address or an RFC 1123 host name."""
    return isinstance(value, str) and (is_ip_address(value) or is_hostname(value))


def host_port(address: str, port: int) -> str:
    """Return `address:port`, an IPv6 address in brackets (`[fd00::1]:6379`) so the port is
    unambiguous; refuse an address that is neither an IP address nor a host name."""
    if not is_address(address) or not 0 < int(port) < 65536:
        raise ValueError(f"not an address and port: {address!r}:{port!r}")
    host = f"[{address}]" if ":" in address else address
    return f"{host}:{int(port)}"


def is_interface_name(value: str) -> bool:
    """Return True for a Linux network interface name (eth1, ens3f0, ib0, bond0.100)."""
    return isinstance(value, str) and bool(_INTERFACE_NAME.fullmatch(value))


def is_repo_id(value: str) -> bool:
    """Return True for a Hugging Face repository id such as `meta-llama/Llama-3.1-70B`."""
    if not isinstance(value, str) or not _REPO_ID.fullmatch(value):
        return False
    return ".." not in value and "--" not in value


def is_path(value: str) -> bool:
    """Return True for an absolute path of plain segments, without `..`."""
    if not isinstance(value, str) or len(value) > 1024 or not _PATH.fullmatch(value):
        return False
    return all(part not in ("..", ".") for part in value.split("/"))


def is_model_ref(value: str) -> bool:
    """Return True for what `vllm serve` may load: a repository id or a local absolute path."""
    return is_repo_id(value) or is_path(value)


def is_image_ref(value: str) -> bool:
    """Return True for a Docker image reference such as `vllm/vllm-openai:v0.32.0`."""
    return isinstance(value, str) and len(value) <= 255 and bool(_IMAGE.fullmatch(value))


def is_name(value: str) -> bool:
    """Return True for a served model name / application name (letters, digits, `._-`)."""
    return isinstance(value, str) and bool(_NAME.fullmatch(value))


def to_name(text: str, default: str = "model") -> str:
    """Return `text` reduced to a valid name (lower case, other characters become `-`)."""
    name = re.sub(r"[^a-z0-9._-]+", "-", str(text).lower()).strip("-._")[:100]
    return name if is_name(name) else default
