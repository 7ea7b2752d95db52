"""Uncertainty bands of the serving predictions, taken from the calibration residuals.

bench/fit_bands.py replays every calibration run (tests/planner/engine/fixtures/serving_runs.json)
and writes bands.json: per regime (GPU generation / dense or MoE / weight dtype / load shape /
step backend) the p80 of |predicted / measured − 1| for TTFT, TPOT and output tok/s, with the
number of runs behind it. A prediction in a regime with enough calibration runs carries that
regime's band; any other carries the wider `uncalibrated` band, which says so in its basis.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

BANDS_FILE = Path(__file__).with_name("bands.json")
MIN_RUNS = 5  # fewer calibration runs than this give no band of their own


@dataclass(frozen=True, slots=True, kw_only=True)
class Band:
    """Relative half-widths (share of the value) and where they come from."""

    ttft: float
    tpot: float
    tok_s: float
    basis: str
    runs: int = 0  # calibration runs behind the band (0: none, the wide fallback band)
    regime: str = ""  # the regime it was looked up under


def regime(*, generation: str, moe: bool, dtype: str, arrival: str, backend: str) -> str:
    """Return the regime key a prediction's band is looked up under."""
    return "/".join((generation, "moe" if moe else "dense", dtype, arrival, backend))


@cache
def _table() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BANDS_FILE.read_text())
    return data


def band_for(key: str) -> Band:
    """Return the band of regime `key`: its calibration p80, or the uncalibrated band."""
    table = _table()
    row = table["regimes"].get(key)
    floor = table["floor"]
    wide = table["uncalibrated"]
    if row and row["runs"] >= MIN_RUNS:
        # TTFT is compared on fewer runs (prefix-cache state known); too few keep the wide band.
        ttft = max(row["ttft"], floor["ttft"]) if row["ttft_runs"] >= MIN_RUNS else wide["ttft"]
        return Band(
            ttft=ttft,
            tpot=max(row["tpot"], floor["tpot"]),
            tok_s=max(row["tok_s"], floor["tok_s"]),
            basis=f"p80 error of {row['runs']} calibration runs ({key})",
            runs=int(row["runs"]),
            regime=key,
        )
    return Band(
        ttft=wide["ttft"],
        tpot=wide["tpot"],
        tok_s=wide["tok_s"],
        basis=f"no calibration runs like this ({key}): {wide['why']}",
        regime=key,
    )
