"""Every URL of the project, walked from the URLconf, with sample arguments to request it."""

from collections.abc import Iterator
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver


@dataclass(frozen=True)
class Route:
    name: str  # namespaced URL name, e.g. "inventory:machine-detail"
    route: str  # the pattern as written, for messages
    kwargs: tuple[str, ...]  # the URL's keyword arguments


def _walk(patterns, prefix: str = "", namespace: str = "") -> Iterator[Route]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            ns = namespace
            if pattern.namespace:
                ns = f"{namespace}:{pattern.namespace}" if namespace else pattern.namespace
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern), ns)
        elif isinstance(pattern, URLPattern):
            name = pattern.name or ""
            full = f"{namespace}:{name}" if namespace and name else name
            kwargs = tuple(pattern.pattern.regex.groupindex)
            yield Route(full, prefix + str(pattern.pattern), kwargs)


def project_routes() -> list[Route]:
    """Return the project's own routes, one per URL name.

    The admin is Django's (permission-checked by Django itself), and DRF's format-suffix
    variants (".json") share the view of the route they decorate.
    """
    seen: dict[str, Route] = {}
    for route in _walk(get_resolver().url_patterns):
        if route.route.startswith("admin/") or "format" in route.kwargs:
            continue
        if not route.name:
            raise AssertionError(f"URL {route.route!r} has no name: name it to give it a rule")
        seen.setdefault(route.name, route)
    return sorted(seen.values(), key=lambda r: r.name)
