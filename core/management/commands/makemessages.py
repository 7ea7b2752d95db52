"""makemessages that also extracts the engine's message templates.

planner/presentation/templates.py marks each template with the no-op `N_("...")` (with its
plural: `NP_("...", "...")`) and each engine word with `NC_("engine value", "...")`
(planner/engine/messages.py): pure Python, no Django in the engine. xgettext is told about the
markers, so every template has its one entry
in the catalog. Same command, same arguments as Django's (docs/i18n.md).
"""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [
        *makemessages.Command.xgettext_options,
        "--keyword=N_",
        "--keyword=NP_:1,2",
        "--keyword=NC_:1c,2",
    ]
