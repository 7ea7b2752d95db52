"""The API's JSON parser: DRF's, plus a nesting-depth guard that names the field."""

import codecs
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser, get_encoding

from core import json_input


class DepthLimitedJSONParser(JSONParser):
    """Refuse bodies nested deeper than json_input.MAX_DEPTH with a 400 naming the field.

    DRF's parser lets a 100,000-deep body raise RecursionError (a 500).
    """

    def parse(self, stream: Any, media_type: Any = None, parser_context: Any = None) -> Any:
        encoding = get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return json_input.loads(text)
        except json_input.JsonInputError as exc:
            field = exc.path or "non_field_errors"
            raise ParseError({field: [exc.message]}) from None
        except ValueError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
