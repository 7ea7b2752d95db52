"""core.json_input: the fast check and the path-naming walk agree on every JSON value."""

import math

from hypothesis import given
from hypothesis import strategies as st

from core.json_input import MAX_INT, refused_value

scalars = st.none() | st.booleans() | st.text(max_size=5) | st.integers() | st.floats()
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=30,
)


def _expected(value, depth=1, max_depth=6):
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return abs(value) > MAX_INT
    if isinstance(value, dict | list):
        items = value.values() if isinstance(value, dict) else value
        return depth > max_depth or any(_expected(v, depth + 1, max_depth) for v in items)
    return False


@given(json_values)
def test_a_value_is_refused_exactly_when_it_holds_a_bad_number_or_nests_too_deep(value):
    refused = refused_value(value, max_depth=6)

    assert (refused is not None) == _expected(value)
