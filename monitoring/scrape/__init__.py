"""Pure-Python scraping of vLLM, Ray and GPU exporters: fetch, parse, extract, derive. No Django.

Entry points: `scrape_once(source, kind, previous)` for a live target and `from_text(text, kind)`
for a saved payload; both return a ScrapeResult. Kinds: `kinds.REGISTRY`; keys: `keys.SERIES`.
"""

from .errors import FetchError, ParseError, ScrapeError
from .fetch import Allowlist, FetchPolicy
from .run import KINDS, PollError, ScrapeResult, from_text, metrics_url, scrape_once
from .series import Histogram, RawSnapshot, Sample, parse_series_id, series_id

__all__ = [
    "KINDS",
    "Allowlist",
    "FetchError",
    "FetchPolicy",
    "Histogram",
    "ParseError",
    "PollError",
    "RawSnapshot",
    "Sample",
    "ScrapeError",
    "ScrapeResult",
    "from_text",
    "metrics_url",
    "parse_series_id",
    "scrape_once",
    "series_id",
]
