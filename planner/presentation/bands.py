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
    basis: str  # in the reader's language, in plain words (no regime keys)
    runs: int = 0  # published benchmark runs behind the band (0: not yet measured)


def _pct(value: float, low: float) -> int:
    """Return the band's half-width in whole percent of `value` (0 when there is none)."""
    if value <= 0 or low <= 0:
        return 0
    return round(100 * (value - low) / value)


def gpu_name(slug: str) -> str:
    """Return a GPU's short name as a team says it ("A800" for a800-80g-sxm)."""
    return slug.split("-", 1)[0].upper() if slug else ""


def _setup_words(regime: str, gpu: str) -> str:
    """Return the setup a band was looked up for, in words: "A800, a dense model, bf16"."""
    parts = regime.split("/")
    if len(parts) < 3:
        return gpu_name(gpu)
    generation, arch, dtype = parts[:3]
    where = gpu_name(gpu) or _("%(generation)s GPUs") % {"generation": generation.title()}
    model = _("a mixture-of-experts model") if arch == "moe" else _("a dense model")
    return _("%(gpu)s, %(model)s, %(dtype)s weights") % {
        "gpu": where,
        "model": model,
        "dtype": dtype,
    }


def basis_text(p: Prediction, gpu: str = "") -> str:
    """Return where the bands of `p` come from, in words a team lead reads."""
    setup = _setup_words(p.band_regime, gpu)
    if p.band_runs > 0:
        return ngettext(
            "the model's error on %(n)s published benchmark run like this one (%(setup)s)",
            "the model's error on %(n)s published benchmark runs like this one (%(setup)s)",
            p.band_runs,
        ) % {"n": p.band_runs, "setup": setup}
    if p.band_regime:
        return _(
            "not yet measured with this setup (%(setup)s): benchmark it to narrow the band"
        ) % {"setup": setup}
    return _("the model's error on published benchmark runs")


def bands(p: Prediction, gpu: str = "") -> Bands:
    """Return the bands of `p` for display (`gpu`: the layout's GPU slug, named in the basis)."""
    return Bands(
        ttft_pct=_pct(p.ttft_p50_ms, p.ttft_p50_low_ms),
        tpot_pct=_pct(p.tpot_p50_ms, p.tpot_p50_low_ms),
        tok_s_pct=_pct(p.output_tok_s, p.output_low_tok_s),
        basis=basis_text(p, gpu),
        runs=p.band_runs,
    )


def basis_words(b: Bands) -> str:
    """Return the bands and where they come from in one sentence, e.g. "±30 % on throughput
    and time per token, ±50 % on the first token: not yet measured with this setup (...)"."""
    if b.tok_s_pct == b.tpot_pct:
        spread = _("±%(speed)s %% on throughput and time per token") % {"speed": b.tok_s_pct}
    else:
        spread = _("±%(tok)s %% on throughput, ±%(tpot)s %% on time per token") % {
            "tok": b.tok_s_pct,
            "tpot": b.tpot_pct,
        }
    return _("%(spread)s, ±%(ttft)s %% on the first token: %(basis)s.") % {
        "spread": spread,
        "ttft": b.ttft_pct,
        "basis": b.basis,
    }


def with_band(value: str, pct: int) -> str:
    """Return a formatted figure with its band, e.g. '1,234 (±8 %)' (as it is without one)."""
    if pct <= 0:
        return value
    return _("%(value)s (±%(pct)s %%)") % {"value": value, "pct": pct}


def markdown_row(label: str, p: Prediction, gpu: str = "") -> str:
    """Return one layout's serving predictions as a Markdown table row."""
    b = bands(p, gpu)
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
