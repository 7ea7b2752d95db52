"""The embedded series store: samples, one-minute rollups and fleet sums in ServePlan's own
database.

- store: EmbeddedStore, the series-store interface over the tables (monitoring.series.store).
- queries: the range, fleet-sum and latest-sample reads in SQL; window: a target's window of
  values for evidence and plan vs reality.
- fleet_sums: the fleet's tick rows averaged per minute and per time bucket.
- retention: the rollups, the retention of raw samples and the hourly sample partitions
  (monitoring.partitioning names them).

Only the store package imports these modules: every other reader goes through
monitoring.stores.current().
"""

from monitoring.stores.embedded.store import EmbeddedStore

__all__ = ["EmbeddedStore"]
