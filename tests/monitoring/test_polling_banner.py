"""The overview's polling banner says only what is true (issue 30 item 8): no "0 targets
overdue, the worst (…) by 15 s" when nothing is overdue, and the name is never left empty."""

import pytest
from django.template.loader import render_to_string
from django.utils import translation

from monitoring.selectors import PollingHealth


def _banner(health: PollingHealth, language: str = "en") -> str:
    fleet = {"polling": health, "totals": {}, "tiles": []}
    with translation.override(language):
        return render_to_string("monitoring/partials/fleet.html", {"fleet": fleet})


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_missed_polls_without_a_late_target_name_no_worst_target(language):
    html = _banner(PollingHealth(lag_s=15, late_targets=0, missed_last_hour=2), language)

    assert "0 targets overdue" not in html
    assert "0 个目标" not in html
    assert "()" not in html
    assert "（）" not in html
    assert ("2 polls missed in the last hour." in html) or ("2" in html and "小时" in html)


def test_late_targets_name_the_worst():
    html = _banner(
        PollingHealth(lag_s=42, late_targets=3, missed_last_hour=0, most_late="sim-mistral-7b")
    )

    assert "Polls are late: 3 targets overdue, the worst (sim-mistral-7b) by 42 s." in html
    assert "missed in the last hour" not in html
