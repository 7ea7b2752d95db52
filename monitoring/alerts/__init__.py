"""Alerts: the rules' evaluation after each poll, and the signed webhooks that carry them.

- evaluate: firing and resolving a target's alert events, and the JSON a webhook receives.
- webhooks: the signature a receiver checks.

The rules themselves are written by monitoring.services.rules; each target kind's default rules
are in monitoring.targets.kinds; the delivery task is monitoring.tasks.deliver_webhook.
"""
