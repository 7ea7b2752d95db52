"""Targets as the web app sees them, and where they may be reached.

- kinds: one registry entry per target kind (tiles, charts, default rules, the state page).
- reach: where pollers and webhooks may connect (the product's allowlist from the database).

Writing targets is monitoring.services.targets; the URL check before saving is
monitoring.services.url_guard.
"""
