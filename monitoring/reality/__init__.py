"""Plan vs reality, and the calibration it feeds.

- observation: what a vLLM target did over a window, as one typed value.
- server_checks: is the server the one the plan describes (model, GPUs, TP), before any number
  is compared.
- comparison: a plan against its servers, like for like (one server and one replica, or the
  linked servers and the plan).
- summaries: one summary per plan for the planner's pages (a plan, a decision).
- evidence: a decision record's evidence filled from what a target measured.
- calibration: the planner's factors fitted from what linked servers measured.
"""
