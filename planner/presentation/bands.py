"""The uncertainty bands of the serving predictions as the reader sees them.

The engine puts a relative band around each p50 output (planner/engine/serving/bands.py): the
p80 error of the calibration runs of the same regime, or a wide fallback where no calibration
run is like the layout. Pages and the Markdown export show each figure as "1,234 (±8 %)" and
say, once per layout, where its band comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from planner.engine.serving import Prediction
from planner.presentation.numbers import amount


@dataclass(frozen=True, slots=True, kw_only=True)
class Bands:
    """Half-widths in percent of the p50 TTFT, TPOT and output tok/s, and their source."""

    ttft_pct: int
    tpot_pct: int
    tok_s_pct: int
    basis: str  # in the reader's language


def _pct(value: float, low: float) -> int:
    """Return the band's half-width in whole percent of `value` (0 when there is none)."""
    if value <= 0 or low <= 0:
        return 0
    return round(100 * (value - low) / value)


def basis_text(p: Prediction) -> str:
    """Return where the bands of `p` come from, in the reader's language."""
    if p.band_runs > 0:
        return ngettext(
            "p80 error of the %(n)s published calibration run like this one (%(regime)s)",
            "p80 error of the %(n)s published calibration runs like this one (%(regime)s)",
            p.band_runs,
        ) % {"n": p.band_runs, "regime": p.band_regime}
    if p.band_regime:
        return _(
            "no calibration run for this setup (%(regime)s): a wide fallback band, twice the"
            " worst calibrated error"
        ) % {"regime": p.band_regime}
    return _("errors on published benchmark runs")


def bands(p: Prediction) -> Bands:
    """Return the bands of `p` for display."""
    return Bands(
        ttft_pct=_pct(p.ttft_p50_ms, p.ttft_p50_low_ms),
        tpot_pct=_pct(p.tpot_p50_ms, p.tpot_p50_low_ms),
        tok_s_pct=_pct(p.output_tok_s, p.output_low_tok_s),
        basis=basis_text(p),
    )


def with_band(value: str, pct: int) -> str:
    """Return a formatted figure with its band, e.g. '1,234 (±8 %)' (as it is without one)."""
    if pct <= 0:
        return value
    return _("%(value)s (±%(pct)s %%)") % {"value": value, "pct": pct}


def markdown_row(label: str, p: Prediction) -> str:
    """Return one layout's serving predictions as a Markdown table row."""
    b = bands(p)
    cells = (
        label,
        with_band(amount(p.ttft_p50_ms), b.ttft_pct),
        amount(p.ttft_p95_ms),
        with_band(amount(p.tpot_p50_ms, 1), b.tpot_pct),
        amount(p.tpot_p95_ms, 1),
        with_band(amount(p.output_tok_s), b.tok_s_pct),
        b.basis,
    )
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
