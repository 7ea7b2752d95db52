"""Load an uploaded YAML document without letting it grow, hide duplicates or nest without end.

PyYAML's SafeLoader builds only plain types but still expands aliases: 509 bytes of nested
`*a` references became a 55 MB row. This loader refuses anchors and aliases outright (a
machine list has no use for them), refuses a key written twice in one mapping (PyYAML keeps
the last one silently) and bounds the nesting depth (composing recurses once per level).
"""

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

MAX_DEPTH = 16


class UntrustedYamlLoader(yaml.SafeLoader):
    """yaml.SafeLoader without anchors, aliases, duplicate keys or deep nesting."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise ComposerError(
                None, None, "anchors and aliases (&name, *name) are not allowed", event.start_mark
            )
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise ComposerError(
                None, None, f"nested more than {MAX_DEPTH} levels deep", event.start_mark
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable: the base class explains that one
                break
            if duplicate:
                raise ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} appears twice",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _construct_int(loader: UntrustedYamlLoader, node: Any) -> int:
    # Python refuses to convert integers of more than 4,300 digits (ValueError, not YAMLError).
    try:
        return yaml.SafeLoader.construct_yaml_int(loader, node)
    except ValueError:
        raise ConstructorError(
            None, None, f"the number {node.value[:20]}… is too long", node.start_mark
        ) from None


UntrustedYamlLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load(text: str) -> Any:
    """Parse one YAML document from untrusted text; yaml.YAMLError explains what is refused."""
    return yaml.load(text, Loader=UntrustedYamlLoader)  # noqa: S506 - a SafeLoader subclass
