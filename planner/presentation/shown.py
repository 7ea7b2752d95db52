"""The one set of speed figures a reader sees for a layout, on every page, export and API answer.

The serving model's simulated prediction is the shown number, always with its band; the
engine's closed-form steady state only ranks the layouts and is never shown beside it
(planner/engine/shown.py). A layout the serving model did not simulate shows no speed: "—"
on the pages, null in the API. A plan saved before the serving model existed simulated none:
its closed-form figures are then the only ones there are, shown without a band.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner.engine.result import Candidate, PlanResult
from planner.presentation.bands import Bands, bands, basis_words, with_band
from planner.presentation.numbers import amount


@dataclass(frozen=True, slots=True, kw_only=True)
class ShownSpeed:
    """The speed figures shown for one layout (all replicas together) and their bands."""

    output_tok_s: float
    ttft_ms: float  # median
    ttft_p95_ms: float | None  # None: a legacy closed-form figure, which has no p95
    tpot_ms: float  # median time per output token
    tpot_p95_ms: float | None
    bands: Bands | None  # None: no band (a legacy closed-form figure)

    def tok_s_text(self, unit: str = "") -> str:
        """Return the output tok/s as shown, with its band: "2,211 (±30 %)" (`unit` after
        the figure, before the band)."""
        pct = self.bands.tok_s_pct if self.bands else 0
        return with_band(amount(self.output_tok_s) + unit, pct)

    def ttft_text(self, unit: str = "") -> str:
        """Return the median time to first token in ms as shown, with its band."""
        return with_band(amount(self.ttft_ms) + unit, self.bands.ttft_pct if self.bands else 0)

    def tpot_text(self, unit: str = "") -> str:
        """Return the median time per output token in ms as shown, with its band."""
        return with_band(amount(self.tpot_ms, 1) + unit, self.bands.tpot_pct if self.bands else 0)

    def to_json(self) -> dict[str, Any]:
        """Return the figures as the API gives them, the bands as half-widths in percent."""
        return {
            "output_tok_s": round(self.output_tok_s, 1),
            "ttft_p50_ms": round(self.ttft_ms, 1),
            "ttft_p95_ms": None if self.ttft_p95_ms is None else round(self.ttft_p95_ms, 1),
            "tpot_p50_ms": round(self.tpot_ms, 2),
            "tpot_p95_ms": None if self.tpot_p95_ms is None else round(self.tpot_p95_ms, 2),
            "band_pct": None
            if self.bands is None
            else {
                "output_tok_s": self.bands.tok_s_pct,
                "ttft_p50_ms": self.bands.ttft_pct,
                "tpot_p50_ms": self.bands.tpot_pct,
            },
            "source": "serving-model" if self.bands is not None else "closed-form (legacy plan)",
        }


def _legacy(result: PlanResult) -> bool:
    """Return whether the result was saved before the serving model simulated any layout."""
    return all(c.serving is None for c in result.candidates)


def shown_speed(c: Candidate | None, result: PlanResult) -> ShownSpeed | None:
    """Return the figures shown for `c`: None when it does not fit or was not simulated."""
    if c is None or not c.fits:
        return None
    p = c.serving
    if p is None:
        if not _legacy(result):
            return None
        return ShownSpeed(
            output_tok_s=c.output_throughput_tok_s,
            ttft_ms=c.ttft_ms,
            ttft_p95_ms=None,
            tpot_ms=c.itl_ms,
            tpot_p95_ms=None,
            bands=None,
        )
    return ShownSpeed(
        output_tok_s=p.output_tok_s,
        ttft_ms=p.ttft_p50_ms,
        ttft_p95_ms=p.ttft_p95_ms,
        tpot_ms=p.tpot_p50_ms,
        tpot_p95_ms=p.tpot_p95_ms,
        bands=bands(p, gpu=c.gpu),
    )


def band_sentence(speed: ShownSpeed | None) -> str:
    """Return what the bands of `speed` mean, in words a team lead reads ("" without one)."""
    if speed is None or speed.bands is None:
        return ""
    return basis_words(speed.bands)
