"""Read-only targets: their series computed by PromQL from a Prometheus that already scrapes
the server, instead of ServePlan polling it (pure: no Django).

- builders: the helpers each kind's table is written with (rates, histograms, relabelling).
- vllm, ray, gpu: one table per kind (key -> PromQL builder, keys from an info family's labels).
- kinds: the tables by scrape kind name.
- reader: ReadOnlyReader, which runs the queries on the server and shapes the answer as the
  embedded store does (the series store routes read-only targets to it).
"""
