"""From bundle to a running, monitored service: the Ansible playbook, the smoke test and the
registration in ServePlan's monitoring, all from the bundle's allocation table (files.py)."""
