"""GPUs and machines: every inventory machine with its GPUs as the exporters see them.

- overview: the Machines view's reads (one row per machine, one cell per GPU, GPU states).
- cards: the view's HTML, built in Python for a fleet of cards.
- allocation: which GPUs of which host a saved plan gives to its servers.
- cluster_nodes: a Ray cluster's nodes by name, and the nodes it should have.
- hosts: how one machine's names are matched across sources.
"""
