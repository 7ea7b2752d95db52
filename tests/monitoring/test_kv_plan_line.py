"""The KV-usage chart's plan line sits on its % axis (issue 30): a plan that planned more KV
capacity than the server has is no line at 1,550 % that flattens the real series."""

from types import SimpleNamespace

import pytest

from monitoring.views.pages import _kv_plan_pct


def _comparison(planned: float, observed: float):
    row = SimpleNamespace(planned=planned, observed=observed)
    return SimpleNamespace(row=lambda quantity: row, targets=["vllm-01"])


@pytest.mark.parametrize(
    ("planned", "observed", "expected"),
    [
        pytest.param(800, 1000, 80.0, id="below-the-server"),
        pytest.param(1000, 1000, 100.0, id="exactly"),
        pytest.param(1250, 1000, 125.0, id="a server a fifth short of the plan"),
        pytest.param(1550, 100, None, id="beyond-the-axis"),
    ],
)
def test_the_plan_line_is_drawn_only_on_the_usage_scale(planned, observed, expected):
    assert _kv_plan_pct(_comparison(planned, observed)) == expected
