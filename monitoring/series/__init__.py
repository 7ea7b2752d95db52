"""The series-store interface (pure: no Django) and what crosses it. See store.SeriesStore."""

from .model import (
    ForgetReport,
    Forgotten,
    LatestValue,
    Points,
    RangeResult,
    SeriesMatch,
    SeriesPoints,
    Source,
    StoreUnavailable,
    TargetRef,
    WriteBatch,
    WriteReport,
    WriteSample,
)
from .store import SeriesStore

__all__ = [
    "ForgetReport",
    "Forgotten",
    "LatestValue",
    "Points",
    "RangeResult",
    "SeriesMatch",
    "SeriesPoints",
    "SeriesStore",
    "Source",
    "StoreUnavailable",
    "TargetRef",
    "WriteBatch",
    "WriteReport",
    "WriteSample",
]
